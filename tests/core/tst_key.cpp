#include <QtTest>

#include "core/key.h"

// Keys are checked before any I/O; whatever the business id holds must survive str()/parse().
class TestKey : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void valid_data();
    void valid();
    void invalid_data();
    void invalid();
    void hostileBusinessIds_data();
    void hostileBusinessIds();
    void malformedText_data();
    void malformedText();
};

namespace {
std::string s(const QByteArray& b) { return b.toStdString(); }

QByteArray errorOf(const QByteArray& tenant, const QByteArray& operation, const QByteArray& businessId)
{
    try {
        idem::TaskKey key(s(tenant), s(operation), s(businessId));
    } catch (const std::invalid_argument& e) {
        return QByteArray(e.what());
    }
    return QByteArrayLiteral("<accepted>");
}
} // namespace

void TestKey::valid_data()
{
    QTest::addColumn<QByteArray>("tenant");
    QTest::addColumn<QByteArray>("operation");
    QTest::addColumn<QByteArray>("businessId");
    QTest::addColumn<QByteArray>("rendered");
    QTest::addRow("article example") << QByteArray("tenant-7") << QByteArray("charge") << QByteArray("order-123")
                                     << QByteArray("tenant-7:charge:order-123");
    QTest::addRow("punctuation in names") << QByteArray("t_1.eu/west") << QByteArray("refund.v2") << QByteArray("r")
                                          << QByteArray("t_1.eu/west:refund.v2:r");
    QTest::addRow("longest names") << QByteArray(64, 't') << QByteArray(64, 'o') << QByteArray(512, 'b')
                                   << QByteArray(64, 't') + ':' + QByteArray(64, 'o') + ':' + QByteArray(512, 'b');
}

void TestKey::valid()
{
    QFETCH(QByteArray, tenant);
    QFETCH(QByteArray, operation);
    QFETCH(QByteArray, businessId);
    QFETCH(QByteArray, rendered);
    const idem::TaskKey key(s(tenant), s(operation), s(businessId));
    QCOMPARE(QByteArray::fromStdString(key.str()), rendered);
    QCOMPARE(QByteArray::fromStdString(key.tenant()), tenant);
    QCOMPARE(QByteArray::fromStdString(key.operation()), operation);
    QCOMPARE(QByteArray::fromStdString(key.businessId()), businessId);
    QVERIFY(idem::TaskKey::parse(key.str()) == key);
}

void TestKey::invalid_data()
{
    QTest::addColumn<QByteArray>("tenant");
    QTest::addColumn<QByteArray>("operation");
    QTest::addColumn<QByteArray>("businessId");
    QTest::addColumn<QByteArray>("reason");
    const QByteArray t("tenant-7"), o("charge"), b("order-123");
    QTest::addRow("empty tenant") << QByteArray() << o << b << QByteArray("tenant is empty");
    QTest::addRow("empty operation") << t << QByteArray() << b << QByteArray("operation is empty");
    QTest::addRow("empty business id") << t << o << QByteArray() << QByteArray("business id is empty");
    QTest::addRow("colon in tenant") << QByteArray("a:b") << o << b << QByteArray("tenant must not contain ':'");
    QTest::addRow("colon in operation") << t << QByteArray("x:") << b << QByteArray("operation must not contain ':'");
    QTest::addRow("tenant 65 bytes") << QByteArray(65, 't') << o << b
                                     << QByteArray("tenant is 65 bytes, longer than the limit of 64");
    QTest::addRow("operation 65 bytes") << t << QByteArray(65, 'o') << b
                                        << QByteArray("operation is 65 bytes, longer than the limit of 64");
    QTest::addRow("space in tenant") << QByteArray("tenant 7") << o << b
                                     << QByteArray("tenant may hold only visible ASCII");
    QTest::addRow("tab in operation") << t << QByteArray("charge\t") << b
                                      << QByteArray("operation may hold only visible ASCII");
    QTest::addRow("newline in tenant") << QByteArray("t\n") << o << b << QByteArray("byte 1 is not");
    QTest::addRow("DEL in tenant") << QByteArray("t\x7f") << o << b << QByteArray("visible ASCII");
    QTest::addRow("NUL in operation") << t << QByteArray("c\0x", 3) << b << QByteArray("visible ASCII");
    QTest::addRow("non-ASCII tenant") << QByteArray("t\xc3\xa9") << o << b << QByteArray("visible ASCII");
    QTest::addRow("no-break space") << t << QByteArray("a\xc2\xa0") << b << QByteArray("visible ASCII");
    QTest::addRow("business id 513 bytes")
        << t << o << QByteArray(513, 'b') << QByteArray("business id is 513 bytes, longer than the limit of 512");
    QTest::addRow("NUL in business id") << t << o << QByteArray("a\0b", 3) << QByteArray("NUL byte at offset 1");
    QTest::addRow("invalid UTF-8 business id") << t << o << QByteArray("x\xff") << QByteArray("not valid UTF-8");
    QTest::addRow("encoded surrogate business id")
        << t << o << QByteArray("\xed\xa0\x80") << QByteArray("not valid UTF-8");
}

void TestKey::invalid()
{
    QFETCH(QByteArray, tenant);
    QFETCH(QByteArray, operation);
    QFETCH(QByteArray, businessId);
    QFETCH(QByteArray, reason);
    const QByteArray message = errorOf(tenant, operation, businessId);
    QVERIFY2(message.contains(reason), message.constData());
    // The message quotes hostile input escaped, never raw.
    for (char c : message)
        QVERIFY2(static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f, message.constData());
}

void TestKey::hostileBusinessIds_data()
{
    QTest::addColumn<QByteArray>("businessId");
    QTest::addRow("quotes") << QByteArray(R"(a"b'c`d)");
    QTest::addRow("sql") << QByteArray("1'; DROP TABLE task_idempotency; --");
    QTest::addRow("percent") << QByteArray("%s%n%x%%");
    QTest::addRow("colons") << QByteArray("a:b::c:");
    QTest::addRow("only a colon") << QByteArray(":");
    QTest::addRow("backslashes") << QByteArray(R"(C:\path\to\x)");
    QTest::addRow("control chars") << QByteArray("\x01\t\n\r\x1b[31m\x7f");
    QTest::addRow("spaces") << QByteArray("  leading and trailing  ");
    QTest::addRow("unicode") << QByteArray("\xe8\xae\xa2\xe5\x8d\x95-\xf0\x9f\x98\x80");
    QTest::addRow("json") << QByteArray(R"({"order":123,"x":[1,2]})");
    QTest::addRow("500 bytes") << QByteArray(500, ';');
    QTest::addRow("512 bytes with colons") << QByteArray(512, ':');
}

void TestKey::hostileBusinessIds()
{
    QFETCH(QByteArray, businessId);
    const idem::TaskKey key("tenant-7", "charge", s(businessId));
    const std::string rendered = key.str();
    QCOMPARE(QByteArray::fromStdString(rendered), QByteArray("tenant-7:charge:") + businessId);
    const auto back = idem::TaskKey::parse(rendered);
    QCOMPARE(QByteArray::fromStdString(back.tenant()), QByteArray("tenant-7"));
    QCOMPARE(QByteArray::fromStdString(back.operation()), QByteArray("charge"));
    QCOMPARE(QByteArray::fromStdString(back.businessId()), businessId);
    QVERIFY(back == key);
}

void TestKey::malformedText_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("reason");
    QTest::addRow("empty") << QByteArray() << QByteArray("must have the form tenant:operation:business_id");
    QTest::addRow("no colon") << QByteArray("order-123") << QByteArray("must have the form");
    QTest::addRow("one colon") << QByteArray("tenant-7:order-123") << QByteArray("must have the form");
    QTest::addRow("empty tenant") << QByteArray(":charge:x") << QByteArray("tenant is empty");
    QTest::addRow("empty operation") << QByteArray("t::x") << QByteArray("operation is empty");
    QTest::addRow("empty business id") << QByteArray("t:charge:") << QByteArray("business id is empty");
    QTest::addRow("space in operation") << QByteArray("t:char ge:x") << QByteArray("operation may hold only");
    QTest::addRow("hostile text quoted") << QByteArray("\x1b[2J") << QByteArray("'\\x1b[2J'");
}

void TestKey::malformedText()
{
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, reason);
    try {
        idem::TaskKey::parse(s(text));
        QFAIL("parse accepted a malformed key");
    } catch (const std::invalid_argument& e) {
        QVERIFY2(QByteArray(e.what()).contains(reason), e.what());
    }
}

QTEST_GUILESS_MAIN(TestKey)
#include "tst_key.moc"
