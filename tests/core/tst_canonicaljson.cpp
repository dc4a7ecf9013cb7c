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
    void appendixBNumbers_data();
    void appendixBNumbers();
    void nonFiniteNumbersAreRefused();
    void numberText_data();
    void numberText();
    void rfcSample();
    void rfcSortingExample();
    void sortsByUtf16NotUtf8();
    void escapes_data();
    void escapes();
    void structure_data();
    void structure();
    void refusedText_data();
    void refusedText();
    void bytesAfterTheDocument_data();
    void bytesAfterTheDocument();
    void refusedValues();
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

void TestCanonicalJson::appendixBNumbers_data()
{
    QTest::addColumn<qulonglong>("bits");
    QTest::addColumn<QByteArray>("expected");
    // RFC 8785 Appendix B, every finite row.
    const std::pair<qulonglong, const char*> rows[] = {
        { 0x0000000000000000, "0" }, { 0x8000000000000000, "0" }, // minus zero
        { 0x0000000000000001, "5e-324" }, { 0x8000000000000001, "-5e-324" },
        { 0x7fefffffffffffff, "1.7976931348623157e+308" }, { 0xffefffffffffffff, "-1.7976931348623157e+308" },
        { 0x4340000000000000, "9007199254740992" }, { 0xc340000000000000, "-9007199254740992" },
        { 0x4430000000000000, "295147905179352830000" }, { 0x44b52d02c7e14af5, "9.999999999999997e+22" },
        { 0x44b52d02c7e14af6, "1e+23" }, { 0x44b52d02c7e14af7, "1.0000000000000001e+23" },
        { 0x444b1ae4d6e2ef4e, "999999999999999700000" }, { 0x444b1ae4d6e2ef4f, "999999999999999900000" },
        { 0x444b1ae4d6e2ef50, "1e+21" }, { 0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7" },
        { 0x3eb0c6f7a0b5ed8d, "0.000001" }, { 0x41b3de4355555553, "333333333.3333332" },
        { 0x41b3de4355555554, "333333333.33333325" }, { 0x41b3de4355555555, "333333333.3333333" },
        { 0x41b3de4355555556, "333333333.3333334" }, { 0x41b3de4355555557, "333333333.33333343" },
        { 0xbecbf647612f3696, "-0.0000033333333333333333" },
        { 0x43143ff3c1cb0959, "1424953923781206.2" }, // round to even
    };
    for (const auto& [bits, expected] : rows)
        QTest::addRow("%016llx", bits) << bits << QByteArray(expected);
}

void TestCanonicalJson::appendixBNumbers()
{
    QFETCH(qulonglong, bits);
    QFETCH(QByteArray, expected);
    const double value = std::bit_cast<double>(static_cast<std::uint64_t>(bits));
    QCOMPARE(QByteArray::fromStdString(idem::esNumberToString(value)), expected);
    QCOMPARE(canonical(nlohmann::json(value)), expected);
    // Reading the canonical spelling back must give the same double (round trip).
    QCOMPARE(canonical(expected), expected);
}

void TestCanonicalJson::nonFiniteNumbersAreRefused()
{
    for (const std::uint64_t bits : { 0x7fffffffffffffffULL, 0x7ff0000000000000ULL, 0xfff0000000000000ULL }) {
        const double value = std::bit_cast<double>(bits);
        QVERIFY(errorOf([&] { idem::esNumberToString(value); }).contains("NaN and Infinity"));
        QVERIFY(errorOf([&] { idem::canonicalJson(nlohmann::json { { "n", value } }); }).contains("'/n'"));
    }
}

void TestCanonicalJson::numberText_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("expected");
    QTest::addRow("1.0 is 1") << QByteArray("1.0") << QByteArray("1");
    QTest::addRow("1.000e0") << QByteArray("1.000e0") << QByteArray("1");
    QTest::addRow("4.50") << QByteArray("4.50") << QByteArray("4.5");
    QTest::addRow("-0") << QByteArray("-0") << QByteArray("0");
    QTest::addRow("-0.0") << QByteArray("-0.0") << QByteArray("0");
    QTest::addRow("-0e5") << QByteArray("-0e5") << QByteArray("0");
    QTest::addRow("1e21") << QByteArray("1e21") << QByteArray("1e+21");
    QTest::addRow("1e20") << QByteArray("1e20") << QByteArray("100000000000000000000");
    QTest::addRow("1E30") << QByteArray("1E30") << QByteArray("1e+30");
    QTest::addRow("5e-324") << QByteArray("5e-324") << QByteArray("5e-324");
    QTest::addRow("1e-7") << QByteArray("1e-7") << QByteArray("1e-7");
    QTest::addRow("1.5e-7") << QByteArray("1.5e-7") << QByteArray("1.5e-7");
    QTest::addRow("0.000001") << QByteArray("0.000001") << QByteArray("0.000001");
    QTest::addRow("0.0000012") << QByteArray("12e-7") << QByteArray("0.0000012");
    QTest::addRow("2e-3") << QByteArray("2e-3") << QByteArray("0.002");
    QTest::addRow("1e-27") << QByteArray("0.000000000000000000000000001") << QByteArray("1e-27");
    QTest::addRow("0.1") << QByteArray("0.1") << QByteArray("0.1");
    QTest::addRow("-123.456") << QByteArray("-123.456e0") << QByteArray("-123.456");
    QTest::addRow("2^53 + 1 rounds") << QByteArray("9007199254740993") << QByteArray("9007199254740992");
    QTest::addRow("int64 max") << QByteArray("9223372036854775807") << QByteArray("9223372036854776000");
    QTest::addRow("int64 min") << QByteArray("-9223372036854775808") << QByteArray("-9223372036854776000");
    QTest::addRow("uint64 max") << QByteArray("18446744073709551615") << QByteArray("18446744073709552000");
    QTest::addRow("past uint64") << QByteArray("123456789012345678901234567890")
                                 << QByteArray("1.2345678901234568e+29");
    QTest::addRow("123456789012345680000")
        << QByteArray("123456789012345678901") << QByteArray("123456789012345680000");
    QTest::addRow("underflow to 0") << QByteArray("1e-400") << QByteArray("0");
}

void TestCanonicalJson::numberText()
{
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, expected);
    QCOMPARE(canonical(text), expected);
}

void TestCanonicalJson::rfcSample()
{
    // RFC 8785 section 3.2.2: the input and its canonical form.
    const QByteArray input = R"({
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
})";
    const QByteArray expected = R"({"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],)"
                                R"("string":")"
                                "\xe2\x82\xac"
                                R"($\u000f\nA'B\"\\\\\"/"})";
    QCOMPARE(canonical(input), expected);
    QCOMPARE(canonical(expected), expected); // canonical form is a fixed point
}

void TestCanonicalJson::rfcSortingExample()
{
    // RFC 8785 section 3.2.3.
    const QByteArray input = R"({
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
})";
    const QByteArray expected = R"({"\r":"Carriage Return","1":"One",")"
                                "\xc2\x80"
                                R"(":"Control",")"
                                "\xc3\xb6"
                                R"(":"Latin Small Letter O With Diaeresis",")"
                                "\xe2\x82\xac"
                                R"(":"Euro Sign",")"
                                "\xf0\x9f\x98\x80"
                                R"(":"Emoji: Grinning Face",")"
                                "\xef\xac\xb3"
                                R"(":"Hebrew Letter Dalet With Dagesh"})";
    QCOMPARE(canonical(input), expected);
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

void TestCanonicalJson::escapes_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("expected");
    QTest::addRow("NUL") << QByteArray(R"("\u0000")") << QByteArray(R"("\u0000")");
    QTest::addRow("U+001F uppercase in") << QByteArray(R"("\u001F")") << QByteArray(R"("\u001f")");
    QTest::addRow("U+000B") << QByteArray(R"("\u000b")") << QByteArray(R"("\u000b")");
    QTest::addRow("short forms") << QByteArray(R"("\u0008\u000c\u000a\u000d\u0009")") << QByteArray(R"("\b\f\n\r\t")");
    QTest::addRow("quote and backslash") << QByteArray(R"("\u0022\\")") << QByteArray(R"("\"\\")");
    QTest::addRow("solidus unescaped") << QByteArray(R"("\/a/")") << QByteArray(R"("/a/")");
    QTest::addRow("DEL verbatim") << QByteArray(R"("\u007f")") << QByteArray("\"\x7f\"");
    QTest::addRow("e acute verbatim") << QByteArray(R"("\u00e9")") << QByteArray("\"\xc3\xa9\"");
    QTest::addRow("U+2028 verbatim") << QByteArray(R"("\u2028\u2029")") << QByteArray("\"\xe2\x80\xa8\xe2\x80\xa9\"");
    QTest::addRow("surrogate pair") << QByteArray(R"("\ud83d\ude00")") << QByteArray("\"\xf0\x9f\x98\x80\"");
    QTest::addRow("raw UTF-8 kept") << QByteArray("\"\xe2\x82\xac\"") << QByteArray("\"\xe2\x82\xac\"");
    QTest::addRow("html is not escaped") << QByteArray(R"("</script>&'")") << QByteArray(R"("</script>&'")");
    QTest::addRow("escapes in keys") << QByteArray(R"({"a\tb":"\u0001"})") << QByteArray(R"({"a\tb":"\u0001"})");
}

void TestCanonicalJson::escapes()
{
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, expected);
    QCOMPARE(canonical(text), expected);
}

void TestCanonicalJson::structure_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("expected");
    QTest::addRow("whitespace") << QByteArray(" {\n\t\"b\" : [ 1 , 2 ] ,\r\n \"a\" : { } } ")
                                << QByteArray(R"({"a":{},"b":[1,2]})");
    QTest::addRow("array order kept") << QByteArray("[3,1,2]") << QByteArray("[3,1,2]");
    QTest::addRow("nested objects sorted") << QByteArray(R"({"z":{"y":1,"x":[{"b":1,"a":2}]},"a":null})")
                                           << QByteArray(R"({"a":null,"z":{"x":[{"a":2,"b":1}],"y":1}})");
    QTest::addRow("empty containers") << QByteArray("[{},[]]") << QByteArray("[{},[]]");
    QTest::addRow("scalar true") << QByteArray(" true ") << QByteArray("true");
    QTest::addRow("scalar string") << QByteArray(R"("x")") << QByteArray(R"("x")");
    QTest::addRow("prefix keys") << QByteArray(R"({"ab":1,"a":2,"":3})") << QByteArray(R"({"":3,"a":2,"ab":1})");
    QTest::addRow("UTF-8 BOM skipped") << QByteArray("\xef\xbb\xbf[1]") << QByteArray("[1]");
    QTest::addRow("trailing JSON whitespace") << QByteArray("{\"a\":1} \t\r\n ") << QByteArray(R"({"a":1})");
    QTest::addRow("number then whitespace") << QByteArray("12\n") << QByteArray("12");
}

void TestCanonicalJson::structure()
{
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, expected);
    QCOMPARE(canonical(text), expected);
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

    // Integers are JCS numbers too: past 2^53 they round as a double would.
    QCOMPARE(canonical(nlohmann::json(std::int64_t { 9007199254740993 })), QByteArray("9007199254740992"));
    QCOMPARE(canonical(nlohmann::json(std::uint64_t { 18446744073709551615ULL })), QByteArray("18446744073709552000"));
    QCOMPARE(canonical(nlohmann::json(-0.0)), QByteArray("0"));
    QCOMPARE(canonical(nlohmann::json(1.0)), QByteArray("1"));
}

QTEST_GUILESS_MAIN(TestCanonicalJson)
#include "tst_canonicaljson.moc"
