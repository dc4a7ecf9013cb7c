#include <QFile>
#include <QtTest>

#include <bit>
#include <cmath>
#include <limits>

#include "core/canonicaljson.h"

// RFC 8785 (JSON Canonicalization Scheme) conformance: the RFC's own examples byte for byte,
// then the corners a digest depends on (number spelling, escapes, key order, refusals).
class TestCanonicalJson : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void rfc8785Corpus_data();
    void rfc8785Corpus();
    void nonFiniteNumbersAreRefused();
    void sortsByUtf16NotUtf8();
    void refusedText_data();
    void refusedText();
    void bytesAfterTheDocument_data();
    void bytesAfterTheDocument();
    void refusedValues();
    void numbersADoubleCannotTell_data();
    void numbersADoubleCannotTell();
    void snapshotNumbersAreRead();
    void errorKinds_data();
    void errorKinds();

private:
    static nlohmann::json corpus();
};

namespace {
QByteArray canonical(const QByteArray& text)
{
    return QByteArray::fromStdString(idem::canonicalJsonFromText(text.toStdString()));
}

QByteArray canonical(const nlohmann::json& value) { return QByteArray::fromStdString(idem::canonicalJson(value)); }

// A literal with its embedded NUL bytes: QByteArray(const char*) would stop at the first.
template <std::size_t N> QByteArray bytes(const char (&text)[N]) { return QByteArray(text, N - 1); }

// The message of the JsonError the call throws, or a marker that it threw nothing.
template <typename F> QByteArray errorOf(F&& call)
{
    try {
        call();
    } catch (const idem::JsonError& e) {
        return QByteArray(e.what());
    }
    return QByteArrayLiteral("<no JsonError thrown>");
}
} // namespace

// The RFC 8785 vectors live in clients/corpus/rfc8785.json, one list for the C++ library and the
// Python and TypeScript clients: Appendix B's finite rows (with their bits), number spellings,
// the RFC's sample and sorting example, escapes and structure.
nlohmann::json TestCanonicalJson::corpus()
{
    const QString root = qEnvironmentVariable("IDEM_SOURCE_DIR");
    if (root.isEmpty())
        qFatal("IDEM_SOURCE_DIR is not set: run this test with ctest, which sets it to the source tree");
    QFile file(root + QStringLiteral("/clients/corpus/rfc8785.json"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(file.fileName()));
    return nlohmann::json::parse(file.readAll().toStdString());
}

void TestCanonicalJson::rfc8785Corpus_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("expected");
    QTest::addColumn<QString>("bits");
    const auto rows = corpus();
    QVERIFY(rows.size() >= 70);
    for (const auto& row : rows)
        QTest::addRow("%s", row.at("name").get<std::string>().c_str())
            << QByteArray::fromStdString(row.at("input").get<std::string>())
            << QByteArray::fromStdString(row.at("canonical").get<std::string>())
            << QString::fromStdString(row.value("bits", std::string()));
}

void TestCanonicalJson::rfc8785Corpus()
{
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, expected);
    QFETCH(QString, bits);
    QCOMPARE(canonical(text), expected);
    QCOMPARE(canonical(expected), expected); // the canonical form is a fixed point
    if (!bits.isEmpty()) {
        bool ok = false;
        const double value = std::bit_cast<double>(static_cast<std::uint64_t>(bits.toULongLong(&ok, 16)));
        QVERIFY(ok);
        QCOMPARE(QByteArray::fromStdString(idem::esNumberToString(value)), expected);
        QCOMPARE(canonical(nlohmann::json(value)), expected);
    }
}

void TestCanonicalJson::nonFiniteNumbersAreRefused()
{
    for (const std::uint64_t bits : { 0x7fffffffffffffffULL, 0x7ff0000000000000ULL, 0xfff0000000000000ULL }) {
        const double value = std::bit_cast<double>(bits);
        QVERIFY(errorOf([&] { idem::esNumberToString(value); }).contains("NaN and Infinity"));
        QVERIFY(errorOf([&] { idem::canonicalJson(nlohmann::json { { "n", value } }); }).contains("'/n'"));
    }
}

void TestCanonicalJson::sortsByUtf16NotUtf8()
{
    // U+10000 is D800 DC00 in UTF-16 and sorts before U+E000, although its UTF-8 (F0 ...)
    // sorts after EE 80 80. nlohmann's std::map holds them in UTF-8 byte order.
    nlohmann::json object;
    object["\xee\x80\x80"] = 1; // U+E000
    object["\xf0\x90\x80\x80"] = 2; // U+10000
    object["z"] = 3;
    QCOMPARE(canonical(object), QByteArray("{\"z\":3,\"\xf0\x90\x80\x80\":2,\"\xee\x80\x80\":1}"));
}

void TestCanonicalJson::refusedText_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("reason");
    QTest::addRow("empty") << QByteArray("") << QByteArray("invalid JSON: parse error at line 1, column 1");
    QTest::addRow("truncated") << QByteArray(R"({"a":1)") << QByteArray("line 1, column 7");
    QTest::addRow("trailing bytes") << QByteArray("{} x") << QByteArray("invalid JSON");
    QTest::addRow("trailing comma") << QByteArray("[1,]") << QByteArray("invalid JSON");
    QTest::addRow("comment") << QByteArray("// c\n1") << QByteArray("invalid JSON");
    QTest::addRow("single quotes") << QByteArray("'a'") << QByteArray("invalid JSON");
    QTest::addRow("NaN literal") << QByteArray("NaN") << QByteArray("invalid JSON");
    QTest::addRow("Infinity literal") << QByteArray("[Infinity]") << QByteArray("invalid JSON");
    QTest::addRow("overflow") << QByteArray("[1e400]") << QByteArray("number overflow");
    QTest::addRow("negative overflow") << QByteArray("[-1e400]") << QByteArray("number overflow");
    QTest::addRow("leading zero") << QByteArray("012") << QByteArray("invalid JSON");
    QTest::addRow("duplicate key") << QByteArray(R"({"a":1,"a":1})")
                                   << QByteArray(R"(duplicate key "a" in the object at the top level)");
    QTest::addRow("duplicate via escape") << QByteArray(R"({"a":1,"\u0061":2})") << QByteArray("duplicate key \"a\"");
    QTest::addRow("nested duplicate") << QByteArray(R"({"x":[0,{"k~/":{"b":1,"b":2}}]})")
                                      << QByteArray("duplicate key \"b\" in the object at '/x/1/k~0~1'");
    QTest::addRow("lone high surrogate") << QByteArray(R"("\ud800")") << QByteArray("surrogate");
    QTest::addRow("lone low surrogate") << QByteArray(R"("\udc00x")") << QByteArray("surrogate");
    QTest::addRow("reversed pair") << QByteArray(R"("\ude00\ud83d")") << QByteArray("surrogate");
    QTest::addRow("invalid UTF-8 byte") << QByteArray("\"\xff\"") << QByteArray("ill-formed UTF-8");
    QTest::addRow("overlong slash") << QByteArray("\"\xc0\xaf\"") << QByteArray("ill-formed UTF-8");
    QTest::addRow("UTF-8 surrogate") << QByteArray("\"\xed\xa0\x80\"") << QByteArray("ill-formed UTF-8");
    QTest::addRow("raw control char") << QByteArray("\"a\x01\"") << QByteArray("control character");
    QTest::addRow("too deep") << QByteArray(600, '[') + QByteArray(600, ']') << QByteArray("nested deeper than 512");
}

void TestCanonicalJson::refusedText()
{
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, reason);
    const QByteArray message = errorOf([&] { idem::canonicalJsonFromText(text.toStdString()); });
    QVERIFY2(message.contains(reason), message.constData());
}

// The issue: nlohmann's reader takes a NUL byte for the end of the input, so
// {"a":1}\0{"b":2} canonicalised to {"a":1} and shared its digest. Any byte after the
// document but JSON whitespace is refused, and the message names its offset.
void TestCanonicalJson::bytesAfterTheDocument_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("reason");
    const QByteArray after = " after the JSON document";
    QTest::addRow("NUL then a second document")
        << bytes("{\"a\":1}\0{\"b\":2} trailing garbage") << "unexpected byte 0x00 at offset 7" + after;
    QTest::addRow("NUL at the end") << bytes("[1]\0") << "unexpected byte 0x00 at offset 3" + after;
    QTest::addRow("NUL after whitespace") << bytes("true \n\0") << "unexpected byte 0x00 at offset 6" + after;
    QTest::addRow("NUL after a number") << bytes("12\0") << "unexpected byte 0x00 at offset 2" + after;
    QTest::addRow("NUL after a string") << bytes("\"s\"\0x") << "unexpected byte 0x00 at offset 3" + after;
    QTest::addRow("NUL alone") << bytes("\0") << QByteArray("unexpected byte 0x00 at offset 0");
    QTest::addRow("NUL inside an object") << bytes("{\"a\":\0}") << QByteArray("unexpected byte 0x00 at offset 5");
    QTest::addRow("NUL inside an array") << bytes("[1,\0 2]") << QByteArray("unexpected byte 0x00 at offset 3");
    QTest::addRow("NUL inside a string") << bytes("\"a\0\"") << QByteArray("U+0000");
    QTest::addRow("letter after") << bytes("{} x") << "unexpected byte 0x78 ('x') at offset 3" + after;
    QTest::addRow("number after a number") << bytes("1 2") << "unexpected byte 0x32 ('2') at offset 2" + after;
    QTest::addRow("second object") << bytes("{}{}") << "unexpected byte 0x7b ('{') at offset 2" + after;
    QTest::addRow("sign after a number") << bytes("1-") << "unexpected byte 0x2d ('-') at offset 1" + after;
    QTest::addRow("form feed is not JSON whitespace")
        << bytes("[]\f") << "unexpected byte 0x0c at offset 2" + after;
    // Found by fuzz_canonicaljson: after a leading zero the lexer has read one digit more.
    QTest::addRow("leading zero") << bytes("02") << "unexpected byte 0x32 ('2') at offset 1" + after;
    QTest::addRow("negative leading zero") << bytes(" -012") << "unexpected byte 0x31 ('1') at offset 3" + after;
    QTest::addRow("zero then NUL") << bytes("0\0") << "unexpected byte 0x00 at offset 1" + after;
    QTest::addRow("fraction then digit") << bytes("[0.5]7") << "unexpected byte 0x37 ('7') at offset 5" + after;
    QTest::addRow("high byte") << bytes("null\xff") << "unexpected byte 0xff at offset 4" + after;
}

void TestCanonicalJson::bytesAfterTheDocument()
{
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, reason);
    const std::string input = text.toStdString();
    QCOMPARE(input.size(), std::size_t(text.size()));
    const QByteArray message = errorOf([&] { idem::canonicalJsonFromText(input); });
    QVERIFY2(message.contains(reason), message.constData());
    QVERIFY2(message.startsWith("invalid JSON: "), message.constData());
}

void TestCanonicalJson::refusedValues()
{
    // Values built in C++ never went through the parser, so the writer checks them itself.
    nlohmann::json badString = { { "a", { { "b", std::string("x\xff") } } } };
    QVERIFY(errorOf([&] { idem::canonicalJson(badString); }).contains("string is not valid UTF-8"));
    QVERIFY(errorOf([&] { idem::canonicalJson(badString); }).contains("'/a/b'"));

    nlohmann::json badKey = nlohmann::json::object();
    badKey[std::string("\xed\xa0\x80")] = 1; // an encoded surrogate
    QVERIFY(errorOf([&] { idem::canonicalJson(badKey); }).contains("member name is not valid UTF-8"));

    const nlohmann::json nan = { 1, std::numeric_limits<double>::quiet_NaN() };
    QVERIFY(errorOf([&] { idem::canonicalJson(nan); }).contains("'/1'"));

    QVERIFY(errorOf([&] { idem::canonicalJson(nlohmann::json::binary({ 1, 2 })); }).contains("binary"));

    nlohmann::json deep = 1;
    for (int i = 0; i < 600; ++i)
        deep = nlohmann::json::array({ std::move(deep) });
    QVERIFY(errorOf([&] { idem::canonicalJson(deep); }).contains("nested deeper than 512"));

    // Integers are JCS numbers too, written as their double; one whose double names another
    // integer is refused (it would share a digest with that one), where it stands.
    const QByteArray past = errorOf([] { idem::canonicalJson({ { "amount", std::int64_t { 9007199254740993 } } }); });
    QVERIFY2(past.startsWith("integer 9007199254740993 is not a double's value: RFC 8785 would write it as "
                             "9007199254740992"),
        past.constData());
    QVERIFY2(past.endsWith(", at '/amount'"), past.constData());
    QVERIFY(errorOf([] {
        idem::canonicalJson(std::uint64_t { 18446744073709551615ULL });
    }).contains("18446744073709552000"));
    QVERIFY(errorOf([] {
        idem::canonicalJson(std::int64_t { -9223372036854775807 - 1 });
    }).contains("-9223372036854776000"));
    QCOMPARE(canonical(nlohmann::json(std::int64_t { 9007199254740992 })), QByteArray("9007199254740992"));
    QCOMPARE(canonical(nlohmann::json(std::int64_t { 9007199254740994 })), QByteArray("9007199254740994"));
    QCOMPARE(canonical(nlohmann::json(std::uint64_t { 10000000000000000000ULL })), QByteArray("10000000000000000000"));
    // A double is itself: written as RFC 8785 writes it, whatever integer it came from.
    QCOMPARE(canonical(nlohmann::json(9007199254740993.0)), QByteArray("9007199254740992"));
    QCOMPARE(canonical(nlohmann::json(-0.0)), QByteArray("0"));
    QCOMPARE(canonical(nlohmann::json(1.0)), QByteArray("1"));
}

// Issue 40 item 9: 9007199254740993 and 9007199254740992 digested alike, so a retry with the
// amount changed there was answered `replay`; 1e-400 digested as 0. Refused now, the same in
// C++, Python and TypeScript (clients/corpus/hostile.json holds all three to it); -0 stays 0,
// as RFC 8785 writes it. canonical: the canonical form, or empty when refused as number_range.
void TestCanonicalJson::numbersADoubleCannotTell_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("canonical");
    QTest::addRow("2^53") << QByteArray("9007199254740992") << QByteArray("9007199254740992");
    QTest::addRow("2^53 + 1") << QByteArray("9007199254740993") << QByteArray();
    QTest::addRow("-(2^53 + 1)") << QByteArray("[-9007199254740993]") << QByteArray();
    QTest::addRow("2^53 + 2") << QByteArray("9007199254740994") << QByteArray("9007199254740994");
    QTest::addRow("int64 max") << QByteArray("9223372036854775807") << QByteArray();
    QTest::addRow("2^63, exact but written otherwise") << QByteArray("9223372036854775808") << QByteArray();
    QTest::addRow("2^63 as RFC 8785 writes it")
        << QByteArray("9223372036854776000") << QByteArray("9223372036854776000");
    QTest::addRow("uint64 max") << QByteArray("18446744073709551615") << QByteArray();
    QTest::addRow("past uint64") << QByteArray("123456789012345678901") << QByteArray();
    QTest::addRow("past uint64 as written")
        << QByteArray("295147905179352830000") << QByteArray("295147905179352830000");
    QTest::addRow("10^23 written out") << QByteArray("100000000000000000000000") << QByteArray("1e+23");
    QTest::addRow("in an object") << QByteArray(R"({"amount":9007199254740993})") << QByteArray();
    QTest::addRow("exponent form rounds") << QByteArray("9.007199254740993e15") << QByteArray("9007199254740992");
    QTest::addRow("fraction rounds (RFC sample)")
        << QByteArray("333333333.33333329") << QByteArray("333333333.3333333");
    QTest::addRow("-0") << QByteArray("-0") << QByteArray("0");
    QTest::addRow("-0.0") << QByteArray("-0.0") << QByteArray("0");
    QTest::addRow("zero with a big exponent") << QByteArray("0e-999") << QByteArray("0");
    QTest::addRow("underflow") << QByteArray("1e-400") << QByteArray();
    QTest::addRow("negative underflow") << QByteArray("[-1e-400]") << QByteArray();
    QTest::addRow("underflow with leading zeros") << QByteArray("0.00001e-320") << QByteArray();
    QTest::addRow("below half the smallest subnormal") << QByteArray("2e-324") << QByteArray();
    QTest::addRow("above half the smallest subnormal") << QByteArray("3e-324") << QByteArray("5e-324");
}

void TestCanonicalJson::numbersADoubleCannotTell()
{
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, canonical);
    try {
        const auto out = QByteArray::fromStdString(idem::canonicalJsonFromText(text.toStdString()));
        QCOMPARE(out, canonical);
    } catch (const idem::JsonError& e) {
        QVERIFY2(canonical.isEmpty(), e.what());
        QCOMPARE(idem::jsonErrorKindName(e.kind()), "number_range");
        QVERIFY2(QByteArray(e.what()).startsWith("invalid JSON: "), e.what());
    }
}

// A snapshot's figures are int64 counts, not request numbers: the reader for them keeps every
// finite number as written.
void TestCanonicalJson::snapshotNumbersAreRead()
{
    const auto j = idem::parseJsonStrict(R"({"n":9223372036854775807,"t":1e-400})", idem::JsonNumbers::Any);
    QCOMPARE(j["n"].get<std::int64_t>(), std::int64_t { 9223372036854775807 });
    QCOMPARE(j["t"].get<double>(), 0.0);
    QVERIFY(errorOf([] { idem::parseJsonStrict(R"({"n":9223372036854775807})"); }).contains("not a double's value"));
}

// The kind of a refusal, which `idemctl digest --batch` prints and the Python and TypeScript
// clients must give too: the first fault met reading left to right decides.
void TestCanonicalJson::errorKinds_data()
{
    using K = idem::JsonErrorKind;
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("kind");
    QTest::addRow("empty") << bytes("") << int(K::Empty);
    QTest::addRow("whitespace only") << bytes(" \t\r\n") << int(K::Empty);
    QTest::addRow("BOM only") << bytes("\xef\xbb\xbf ") << int(K::Empty);
    QTest::addRow("half a BOM") << bytes("\xef\xbb[]") << int(K::Syntax);
    QTest::addRow("NUL alone") << bytes("\0") << int(K::Syntax);
    QTest::addRow("truncated") << bytes("{\"a\":1") << int(K::Syntax);
    QTest::addRow("trailing") << bytes("{} x") << int(K::TrailingData);
    QTest::addRow("number then dot") << bytes("1.5.") << int(K::TrailingData);
    QTest::addRow("dot without digit") << bytes("1.") << int(K::Syntax);
    QTest::addRow("duplicate before bad colon") << bytes("{\"a\":1,\"a\" 2}") << int(K::DuplicateKey);
    QTest::addRow("duplicate then EOF") << bytes("{\"a\":1,\"a\"") << int(K::DuplicateKey);
    QTest::addRow("invalid UTF-8 in a string") << bytes("[\"\xc3\"]") << int(K::InvalidUtf8);
    QTest::addRow("invalid UTF-8 outside") << bytes("[\xc3\xa9]") << int(K::Syntax);
    QTest::addRow("lone high then EOF") << bytes("\"\\ud800") << int(K::LoneSurrogate);
    QTest::addRow("lone high then NUL") << bytes("\"\\ud800\0\"") << int(K::LoneSurrogate);
    QTest::addRow("high then bad hex") << bytes("\"\\ud800\\u12\"") << int(K::Syntax);
    QTest::addRow("phrase in the input") << bytes("[\"invalid string: surrogate U+") << int(K::Syntax);
    QTest::addRow("overflow") << bytes("[1e400, x") << int(K::NumberRange);
    QTest::addRow("huge integer") << "[1" + QByteArray(400, '0') + "]" << int(K::NumberRange);
    QTest::addRow("overflow as a key") << bytes("{1e400:1}") << int(K::Syntax);
    QTest::addRow("2^53 + 1 then junk") << bytes("[9007199254740993, x") << int(K::NumberRange);
    QTest::addRow("2^53 + 1 as a key") << bytes("{9007199254740993:1}") << int(K::Syntax);
    QTest::addRow("underflow then junk") << bytes("[1e-400, x") << int(K::NumberRange);
    QTest::addRow("depth 512 ok then junk") << QByteArray(512, '[') + "x" << int(K::Syntax);
    QTest::addRow("depth 513") << QByteArray(513, '[') + "x" << int(K::Depth);
}

void TestCanonicalJson::errorKinds()
{
    QFETCH(QByteArray, text);
    QFETCH(int, kind);
    try {
        idem::canonicalJsonFromText(text.toStdString());
        QFAIL("no JsonError thrown");
    } catch (const idem::JsonError& e) {
        QCOMPARE(idem::jsonErrorKindName(e.kind()), idem::jsonErrorKindName(static_cast<idem::JsonErrorKind>(kind)));
    }
}

QTEST_GUILESS_MAIN(TestCanonicalJson)
#include "tst_canonicaljson.moc"
