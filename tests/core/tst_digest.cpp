#include <QtTest>

#include "core/canonicaljson.h"
#include "core/digest.h"
#include "core/fieldprints.h"

// The request digest decides between "replay the stored result" and "conflict": spelling must
// not change it, meaning must.
class TestDigest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void knownAnswers();
    void sameDigest_data();
    void sameDigest();
    void differentDigest_data();
    void differentDigest();
    void ignoredFields_data();
    void ignoredFields();
    void ignoreLeavesOtherFieldsCounting();
    void badIgnoreNames_data();
    void badIgnoreNames();
    void valueAndTextAgree();
    void badJsonIsJsonError();
    void bytesAfterTheRequestAreRefused();
    void fieldFingerprintVectors_data();
    void fieldFingerprintVectors();
    void fieldKeyIsBounded();
};

namespace {
QByteArray digestOf(const QByteArray& text, const std::vector<std::string>& ignore = {})
{
    return QByteArray::fromStdString(idem::requestDigestFromText(text.toStdString(), ignore));
}

std::vector<std::string> toFields(const QByteArrayList& list)
{
    std::vector<std::string> out;
    for (const auto& f : list)
        out.push_back(f.toStdString());
    return out;
}
} // namespace

void TestDigest::knownAnswers()
{
    // SHA-256 of hand-written canonical bytes, computed outside this code (sha256sum).
    QCOMPARE(digestOf("{ }"), QByteArray("v1:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"));
    QCOMPARE(digestOf(R"({"target":"acct-1","currency":"EUR","amount":100.0})"),
        QByteArray("v1:71c4903e7f7fe8d0e71020b0d8908da570aa02d6917aef672bca0dbeeee2541a"));
}

void TestDigest::sameDigest_data()
{
    QTest::addColumn<QByteArray>("a");
    QTest::addColumn<QByteArray>("b");
    const QByteArray base = R"({"amount":100,"currency":"EUR","target":"acct-1","meta":{"x":1,"y":[1,2]}})";
    QTest::addRow("key order") << base
                               << QByteArray(
                                      R"({"meta":{"y":[1,2],"x":1},"target":"acct-1","currency":"EUR","amount":100})");
    QTest::addRow("whitespace") << base
                                << QByteArray("{\n  \"amount\" : 100,\n\t\"currency\":\"EUR\" ,\r\n \"target\": "
                                              "\"acct-1\", \"meta\": { \"x\": 1, \"y\": [ 1, 2 ] }\n}\n");
    QTest::addRow("1.0 vs 1")
        << base << QByteArray(R"({"amount":100.0,"currency":"EUR","target":"acct-1","meta":{"x":1.00,"y":[1,2]}})");
    QTest::addRow("exponent spelling")
        << base << QByteArray(R"({"amount":1e2,"currency":"EUR","target":"acct-1","meta":{"x":10E-1,"y":[1,2]}})");
    QTest::addRow("escaped vs raw") << QByteArray(R"({"name":"caf\u00e9","c":"\u0045UR"})")
                                    << QByteArray("{\"c\":\"EUR\",\"name\":\"caf\xc3\xa9\"}");
    QTest::addRow("-0 vs 0") << QByteArray(R"({"n":-0.0})") << QByteArray(R"({"n":0})");
}

void TestDigest::sameDigest()
{
    QFETCH(QByteArray, a);
    QFETCH(QByteArray, b);
    QCOMPARE(digestOf(a), digestOf(b));
}

void TestDigest::differentDigest_data()
{
    QTest::addColumn<QByteArray>("a");
    QTest::addColumn<QByteArray>("b");
    const QByteArray base = R"({"amount":100,"currency":"EUR","target":"acct-1"})";
    QTest::addRow("amount") << base << QByteArray(R"({"amount":101,"currency":"EUR","target":"acct-1"})");
    QTest::addRow("amount cents") << base << QByteArray(R"({"amount":100.01,"currency":"EUR","target":"acct-1"})");
    QTest::addRow("currency") << base << QByteArray(R"({"amount":100,"currency":"USD","target":"acct-1"})");
    QTest::addRow("target") << base << QByteArray(R"({"amount":100,"currency":"EUR","target":"acct-2"})");
    QTest::addRow("number vs string") << base << QByteArray(R"({"amount":"100","currency":"EUR","target":"acct-1"})");
    QTest::addRow("extra field") << base
                                 << QByteArray(R"({"amount":100,"currency":"EUR","target":"acct-1","note":null})");
    QTest::addRow("missing field") << base << QByteArray(R"({"amount":100,"currency":"EUR"})");
    QTest::addRow("array order") << QByteArray(R"({"items":[1,2]})") << QByteArray(R"({"items":[2,1]})");
    QTest::addRow("case of a value") << base << QByteArray(R"({"amount":100,"currency":"eur","target":"acct-1"})");
    QTest::addRow("nested value") << QByteArray(R"({"to":{"iban":"X1"}})") << QByteArray(R"({"to":{"iban":"X2"}})");
}

void TestDigest::differentDigest()
{
    QFETCH(QByteArray, a);
    QFETCH(QByteArray, b);
    QVERIFY(digestOf(a) != digestOf(b));
}

void TestDigest::ignoredFields_data()
{
    QTest::addColumn<QByteArray>("a");
    QTest::addColumn<QByteArray>("b");
    QTest::addColumn<QByteArrayList>("ignore");
    QTest::addRow("top level") << QByteArray(R"({"amount":1,"trace_id":"t-1"})")
                               << QByteArray(R"({"amount":1,"trace_id":"t-2"})") << QByteArrayList { "trace_id" };
    QTest::addRow("absent on one side") << QByteArray(R"({"amount":1,"sent_at":"2024-01-01T00:00:00Z"})")
                                        << QByteArray(R"({"amount":1})") << QByteArrayList { "sent_at" };
    QTest::addRow("several") << QByteArray(R"({"amount":1,"a":1,"b":[1]})")
                             << QByteArray(R"({"amount":1,"a":2,"b":{"c":3}})") << QByteArrayList { "a", "b" };
    QTest::addRow("nested path") << QByteArray(R"({"amount":1,"meta":{"trace_id":"t-1","source":"api"}})")
                                 << QByteArray(R"({"meta":{"source":"api","trace_id":"t-9"},"amount":1})")
                                 << QByteArrayList { "meta.trace_id" };
    QTest::addRow("deep path") << QByteArray(R"({"a":{"b":{"c":1,"d":2}}})")
                               << QByteArray(R"({"a":{"b":{"c":7,"d":2}}})") << QByteArrayList { "a.b.c" };
    QTest::addRow("literal dotted key") << QByteArray(R"({"amount":1,"meta.trace_id":"t-1"})")
                                        << QByteArray(R"({"amount":1,"meta.trace_id":"t-2"})")
                                        << QByteArrayList { "meta.trace_id" };
    QTest::addRow("name matching nothing") << QByteArray(R"({"amount":1})") << QByteArray(R"({"amount":1.0})")
                                           << QByteArrayList { "nope", "amount.x", "a.b.c" };
}

void TestDigest::ignoredFields()
{
    QFETCH(QByteArray, a);
    QFETCH(QByteArray, b);
    QFETCH(QByteArrayList, ignore);
    QCOMPARE(digestOf(a, toFields(ignore)), digestOf(b, toFields(ignore)));
    if (a != b && !ignore.contains("nope"))
        QVERIFY(digestOf(a) != digestOf(b)); // and the fields did matter before they were ignored
}

void TestDigest::ignoreLeavesOtherFieldsCounting()
{
    const std::vector<std::string> ignore { "meta.trace_id" };
    // The business value still counts, and so do sibling fields of the ignored one.
    QVERIFY(digestOf(R"({"amount":1,"meta":{"trace_id":"t"}})", ignore)
        != digestOf(R"({"amount":2,"meta":{"trace_id":"t"}})", ignore));
    QVERIFY(digestOf(R"({"meta":{"trace_id":"t","source":"api"}})", ignore)
        != digestOf(R"({"meta":{"trace_id":"t","source":"batch"}})", ignore));
    // Only the nested field goes: a top-level trace_id is a different field.
    QVERIFY(digestOf(R"({"trace_id":1})", ignore) != digestOf(R"({"trace_id":2})", ignore));
    // The path does not reach through arrays.
    QVERIFY(digestOf(R"({"meta":[{"trace_id":1}]})", ignore) != digestOf(R"({"meta":[{"trace_id":2}]})", ignore));
    // What is hashed is exactly the canonical JSON left after dropping.
    const auto dropped = idem::withoutFields(idem::parseJsonStrict(R"({"b":1,"meta":{"trace_id":"t","z":0}})"), ignore);
    QCOMPARE(QByteArray::fromStdString(idem::canonicalJson(dropped)), QByteArray(R"({"b":1,"meta":{"z":0}})"));
}

void TestDigest::badIgnoreNames_data()
{
    QTest::addColumn<QByteArray>("name");
    QTest::addRow("empty") << QByteArray("");
    QTest::addRow("leading dot") << QByteArray(".a");
    QTest::addRow("trailing dot") << QByteArray("a.");
    QTest::addRow("double dot") << QByteArray("a..b");
}

void TestDigest::badIgnoreNames()
{
    QFETCH(QByteArray, name);
    const std::vector<std::string> ignore { name.toStdString() };
    // Refused for any request shape, so a misconfigured worker fails on its first request.
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, idem::requestDigestFromText(R"({"a":1})", ignore));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, idem::requestDigestFromText("[1]", ignore));
}

void TestDigest::valueAndTextAgree()
{
    const nlohmann::json value = { { "amount", 100 }, { "currency", "EUR" }, { "meta", { { "trace_id", "x" } } } };
    const std::string text = R"({"meta":{"trace_id":"y"},"currency":"EUR","amount":100.0})";
    QCOMPARE(idem::requestDigest(value, { "meta.trace_id" }), idem::requestDigestFromText(text, { "meta.trace_id" }));
    QVERIFY(idem::requestDigest(value).rfind(idem::requestDigestPrefix, 0) == 0);
    QCOMPARE(idem::requestDigest(value).size(), std::size_t { 3 + 64 });
}

void TestDigest::badJsonIsJsonError()
{
    QVERIFY_THROWS_EXCEPTION(idem::JsonError, idem::requestDigestFromText(R"({"a":1,"a":2})"));
    QVERIFY_THROWS_EXCEPTION(idem::JsonError, idem::requestDigestFromText("{"));
}

void TestDigest::bytesAfterTheRequestAreRefused()
{
    // Two different request bodies must not share a digest: before the fix the NUL ended the
    // text and both digested as {"a":1}.
    using namespace std::string_literals;
    const std::string smuggled = "{\"a\":1}\0{\"b\":2} trailing garbage"s;
    QCOMPARE(smuggled.size(), std::size_t(32));
    QByteArray message;
    try {
        message = QByteArray::fromStdString(idem::requestDigestFromText(smuggled));
    } catch (const idem::JsonError& e) {
        message = e.what();
    }
    QVERIFY2(message.contains("unexpected byte 0x00 at offset 7 after the JSON document"), message.constData());
    QVERIFY_THROWS_EXCEPTION(idem::JsonError, idem::requestDigestFromText("{\"a\":1}\0"s));
    QVERIFY_THROWS_EXCEPTION(idem::JsonError, idem::requestDigestFromText(R"({"a":1} {"b":2})"));
    // Trailing JSON whitespace is not a difference.
    QCOMPARE(digestOf("{\"a\":1}\r\n\t "), digestOf(R"({"a":1})"));
}

// The field fingerprints (schema v32) of clients/corpus/fields.json: the vectors the Python and
// TypeScript clients check too, computed by clients/corpus/fields.py with hashlib and hmac alone.
void TestDigest::fieldFingerprintVectors_data()
{
    QTest::addColumn<QByteArray>("key");
    QTest::addColumn<QByteArray>("canonical");
    QTest::addColumn<QByteArray>("fingerprints");
    QTest::addColumn<int>("fields");
    const QString root = qEnvironmentVariable("IDEM_SOURCE_DIR");
    if (root.isEmpty())
        qFatal("IDEM_SOURCE_DIR is not set: run this test with ctest, which sets it to the source tree");
    QFile file(root + QStringLiteral("/clients/corpus/fields.json"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(file.fileName()));
    const auto rows = nlohmann::json::parse(file.readAll().toStdString());
    QVERIFY(rows.size() >= 15);
    for (const auto& row : rows)
        QTest::newRow(row.at("name").get<std::string>().c_str())
            << QByteArray::fromStdString(row.at("key").get<std::string>())
            << QByteArray::fromStdString(row.at("canonical").get<std::string>())
            << QByteArray::fromStdString(row.at("fingerprints").get<std::string>()) << row.at("fields").get<int>();
}

void TestDigest::fieldFingerprintVectors()
{
    QFETCH(QByteArray, key);
    QFETCH(QByteArray, canonical);
    QFETCH(QByteArray, fingerprints);
    QFETCH(int, fields);
    const auto got = idem::fieldFingerprints(canonical.toStdString(), key.toStdString());
    QCOMPARE(QByteArray::fromStdString(got.json), fingerprints);
    QCOMPARE(got.fields, fields);
}

void TestDigest::fieldKeyIsBounded()
{
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, idem::fieldFingerprints("{}", std::string(15, 'k')));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, idem::fieldFingerprints("{}", std::string(1025, 'k')));
    QCOMPARE(idem::fieldFingerprints("{}", std::string(16, 'k')).json, std::string("{}"));
}

QTEST_GUILESS_MAIN(TestDigest)
#include "tst_digest.moc"
