#include <QtTest>

#include "core/utf8.h"

// Issue 31, item 8: the one function every terminal line, CSV cell and report text goes through.
// A table of hostile keys: nothing that controls or reorders a display survives raw, everything
// else (accents, CJK, emoji) stays as it is, ill-formed UTF-8 shows its bytes, long text is cut on
// a character boundary.
class TestDisplaySafe : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void escapes_data();
    void escapes();
    void everyDisplayControlIsEscaped();
    void cutsLongTextOnACharacter();
    void reportAndMessageForms();
};

void TestDisplaySafe::escapes_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QByteArray>("shown");
    const auto add = [](const char* name, QByteArray in, QByteArray out) { QTest::addRow("%s", name) << in << out; };
    add("plain", "t:charge:order-1", "t:charge:order-1");
    add("accents cjk emoji", "t:charge:caf\xc3\xa9-\xe8\xae\xa2\xe5\x8d\x95-\xf0\x9f\x98\x80",
        "t:charge:caf\xc3\xa9-\xe8\xae\xa2\xe5\x8d\x95-\xf0\x9f\x98\x80");
    add("C0 escape sequence", "t:c:\x1b[2J\x1b[31mred", "t:c:\\x1b[2J\\x1b[31mred");
    add("CR forges a line", "t:c:ok\rt:c:fake", "t:c:ok\\x0dt:c:fake");
    add("newline and tab", "a\nb\tc", "a\\x0ab\\x09c");
    add("NUL", QByteArray("a\0b", 3), "a\\x00b");
    add("DEL",
        "a\x7f"
        "b",
        "a\\x7fb");
    add("C1 CSI U+009B",
        "t:c:\xc2\x9b"
        "2J",
        "t:c:\\u009b2J");
    add("C1 U+0085 next line",
        "a\xc2\x85"
        "b",
        "a\\u0085b");
    add("RLO U+202E",
        "t:c:\xe2\x80\xae"
        "txt.exe",
        "t:c:\\u202etxt.exe");
    add("bidi isolates U+2066-U+2069", "\xe2\x81\xa6x\xe2\x81\xa9", "\\u2066x\\u2069");
    add("LRE U+202A",
        "\xe2\x80\xaa"
        "a",
        "\\u202aa");
    add("line separator U+2028",
        "a\xe2\x80\xa8"
        "b",
        "a\\u2028b");
    add("paragraph separator U+2029",
        "a\xe2\x80\xa9"
        "b",
        "a\\u2029b");
    add("BOM U+FEFF", "\xef\xbb\xbfkey", "\\ufeffkey");
    add("zero width space U+200B",
        "a\xe2\x80\x8b"
        "b",
        "a\\u200bb");
    add("arabic letter mark U+061C",
        "a\xd8\x9c"
        "b",
        "a\\u061cb");
    add("tag U+E0041 past the BMP",
        "a\xf3\xa0\x81\x81"
        "b",
        "a\\udb40\\udc41b");
    add("soft hyphen U+00AD",
        "a\xc2\xad"
        "b",
        "a\\u00adb");
    add("backslash is escaped", "a\\u202e", "a\\\\u202e");
    add("invalid: lone continuation",
        "a\x80"
        "b",
        "a\\x80b");
    add("invalid: truncated sequence", "a\xe2\x80", "a\\xe2\\x80");
    add("invalid: overlong slash", "\xc0\xaf", "\\xc0\\xaf");
    add("invalid: surrogate", "\xed\xa0\x80", "\\xed\\xa0\\x80");
    add("invalid: past U+10FFFF", "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
    add("invalid: raw C1 byte",
        "a\x9b"
        "b",
        "a\\x9bb");
}

void TestDisplaySafe::escapes()
{
    QFETCH(QByteArray, input);
    QFETCH(QByteArray, shown);
    QCOMPARE(QByteArray::fromStdString(idem::displaySafe(input.toStdString())), shown);
}

void TestDisplaySafe::everyDisplayControlIsEscaped()
{
    // What a terminal or a bidi algorithm acts on: every C0 / C1, the bidi controls, the
    // separators, BOM. The output is then plain printable ASCII plus ordinary characters.
    std::u32string hostile;
    for (char32_t c = 0; c < 0x20; ++c)
        hostile += c;
    for (char32_t c = 0x7F; c <= 0x9F; ++c)
        hostile += c;
    for (char32_t c : { 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067,
             0x2068, 0x2069, 0xFEFF })
        hostile += c;
    for (char32_t c : hostile) {
        QVERIFY2(idem::isDisplayControl(c), qPrintable(QString::number(c, 16)));
        std::string utf8;
        if (c < 0x80)
            utf8 = std::string(1, static_cast<char>(c));
        else if (c < 0x800)
            utf8 = { static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F)) };
        else
            utf8 = { static_cast<char>(0xE0 | (c >> 12)), static_cast<char>(0x80 | ((c >> 6) & 0x3F)),
                static_cast<char>(0x80 | (c & 0x3F)) };
        const std::string out = idem::displaySafe("k" + utf8 + "k");
        for (unsigned char b : out)
            QVERIFY2(b >= 0x20 && b < 0x7F, qPrintable(QString::number(c, 16)));
    }
    for (char32_t c : { U'a', U'\u00e9', U'\u4e2d', U'\u0301', U'\U0001F600', U'\u00a0' })
        QVERIFY(!idem::isDisplayControl(c));
}

void TestDisplaySafe::cutsLongTextOnACharacter()
{
    // A 1024-byte key: cut at the bound with "...", never inside a character, and a hostile
    // character after the cut is simply not shown.
    std::string key = "t:charge:";
    for (int i = 0; i < 300; ++i)
        key += "\xe4\xb8\xad"; // 中
    key += "\xe2\x80\xae";
    key.resize(1024, 'x');
    QCOMPARE(key.size(), std::size_t(1024));
    const std::string shown = idem::displaySafe(key, 200);
    QVERIFY(shown.size() <= 203);
    QVERIFY(shown.ends_with("..."));
    QVERIFY(!idem::utf8Problem(shown.substr(0, shown.size() - 3)));
    QVERIFY(shown.find("\xe2\x80\xae") == std::string::npos);
    // Uncut, the hostile character shows as its escape.
    QVERIFY(idem::displaySafe(key).find("\\u202e") != std::string::npos);
    // Ill-formed input made only of continuation bytes is still shown (as escapes), not dropped.
    const std::string junk(1024, '\x80');
    QCOMPARE(idem::displaySafe(junk, 10), std::string("\\x80\\x80\\x80\\x80\\x80\\x80\\x80...")); // cut at 7
}

void TestDisplaySafe::reportAndMessageForms()
{
    // Reports and CSV keep backslashes (JSON text stays the same JSON) and line breaks.
    const std::string json = "{\"k\": \"a\\\"b\xe2\x80\xae\", \"m\": \"x\\ny\"}";
    QCOMPARE(idem::displaySafe(json, idem::reportDisplay), std::string("{\"k\": \"a\\\"b\\u202e\", \"m\": \"x\\ny\"}"));
    QCOMPARE(
        idem::displaySafe("line 1\nline 2\r\x1b[A", idem::messageDisplay), std::string("line 1\nline 2\\x0d\\x1b[A"));
}

QTEST_GUILESS_MAIN(TestDisplaySafe)
#include "tst_displaysafe.moc"
