#include <QtTest>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>

#include <map>
#include <set>

#include "tests/support/cliprocess.h"

// Issue 44 item 9: what README.md, docs/*.md, packaging/idemctl.1 and the comments of core/,
// operations/, models/ and cli/ name must exist: a path of the repository, an idemctl command (its
// table, `idemctl --help`) and each option given to one (`idemctl COMMAND --help`). The rights
// table and the command lists are held against their sources (idem_right_list.sql, the command
// table). No database: a few runs of idemctl --help.

namespace {

struct Text {
    QString file; // relative to the repository
    int line = 0;
    QString text;
    bool code = false; // a code span, a code block or a man page's command line
};

QString sourceDir() { return qEnvironmentVariable("IDEM_SOURCE_DIR"); }

QString readFile(const QString& relative)
{
    QFile f(sourceDir() + QLatin1Char('/') + relative);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll());
}

QStringList documents()
{
    QStringList out { QStringLiteral("README.md") };
    const QDir docs(sourceDir() + QStringLiteral("/docs"));
    for (const auto& name : docs.entryList({ QStringLiteral("*.md") }, QDir::Files, QDir::Name))
        out << QStringLiteral("docs/") + name;
    return out;
}

// Markdown: prose, with its code spans and the lines of its code blocks as code.
void markdownTexts(const QString& file, std::vector<Text>& out)
{
    static const QRegularExpression span(QStringLiteral("`([^`]+)`"));
    bool fenced = false;
    int n = 0;
    for (const auto& line : readFile(file).split(QLatin1Char('\n'))) {
        ++n;
        if (line.trimmed().startsWith(QLatin1String("```"))) {
            fenced = !fenced;
            continue;
        }
        if (fenced) {
            out.push_back({ file, n, line, true });
            continue;
        }
        out.push_back({ file, n, line, false });
        for (auto it = span.globalMatch(line); it.hasNext();)
            out.push_back({ file, n, it.next().captured(1), true });
    }
}

// The man page without its fonts and escapes; a command's entry (.TP, then .B migrate [...]) is
// code, read as "idemctl migrate [...]".
void manTexts(const QString& file, std::vector<Text>& out)
{
    static const QRegularExpression font(QStringLiteral(R"(\\f[BIRP])"));
    int n = 0;
    bool commands = false;
    QString previous;
    for (QString line : readFile(file).split(QLatin1Char('\n'))) {
        ++n;
        const bool entry = previous == QLatin1String(".TP");
        previous = line;
        line.remove(font)
            .replace(QLatin1String("\\-"), QLatin1String("-"))
            .replace(QLatin1String("\\e"), QLatin1String("\\"));
        if (line.startsWith(QLatin1String(".SH")))
            commands = line.contains(QLatin1String("COMMANDS"));
        if (commands && entry && line.startsWith(QLatin1String(".B ")))
            out.push_back({ file, n, QStringLiteral("idemctl ") + line.mid(3), true });
        else
            out.push_back({ file, n, line, line.startsWith(QLatin1String("idemctl ")) });
    }
}

// The // comments of the sources, prose with their `code` spans.
void commentTexts(std::vector<Text>& out)
{
    static const QRegularExpression span(QStringLiteral("`([^`]+)`"));
    for (const char* dir : { "core", "operations", "models", "cli" }) {
        const QDir d(sourceDir() + QLatin1Char('/') + QLatin1String(dir));
        for (const auto& name :
            d.entryList({ QStringLiteral("*.h"), QStringLiteral("*.cpp") }, QDir::Files, QDir::Name)) {
            const QString file = QLatin1String(dir) + QLatin1Char('/') + name;
            int n = 0;
            for (const auto& line : readFile(file).split(QLatin1Char('\n'))) {
                ++n;
                const auto at = line.indexOf(QLatin1String("//"));
                if (at < 0 || line.left(at).count(QLatin1Char('"')) % 2 == 1)
                    continue;
                const QString comment = line.mid(at + 2);
                out.push_back({ file, n, comment, false });
                for (auto it = span.globalMatch(comment); it.hasNext();)
                    out.push_back({ file, n, it.next().captured(1), true });
            }
        }
    }
}

std::vector<Text> allTexts()
{
    std::vector<Text> out;
    for (const auto& doc : documents())
        markdownTexts(doc, out);
    manTexts(QStringLiteral("packaging/idemctl.1"), out);
    commentTexts(out);
    return out;
}

QString where(const Text& t) { return t.file + QLatin1Char(':') + QString::number(t.line); }

idem::test::CliRun idemctl(const QStringList& args)
{
    return idem::test::runProgram(idem::test::idemctlPath(), args, 20000);
}

// The text of each RAISE of resources/sql/functions/*.sql, its message, HINT and DETAIL: its string
// literals, those written one after the other (adjacent, or joined by ||) as one, the others apart
// (" | "), a format() placeholder (%s, %I, %L) read as "1". Comments are left out.
struct Raise {
    QString file;
    int line = 0;
    QString text;
};

std::vector<Raise> functionRaises()
{
    std::vector<Raise> out;
    const QDir dir(sourceDir() + QStringLiteral("/resources/sql/functions"));
    static const QRegularExpression placeholder(QStringLiteral("%[sIL]"));
    for (const auto& name : dir.entryList({ QStringLiteral("*.sql") }, QDir::Files, QDir::Name)) {
        const QString file = QStringLiteral("resources/sql/functions/") + name;
        const QString sql = readFile(file);
        const auto wordAt = [&](qsizetype i, QLatin1String word) {
            return sql.mid(i, word.size()).compare(word, Qt::CaseInsensitive) == 0
                && (i == 0 || !(sql.at(i - 1).isLetterOrNumber() || sql.at(i - 1) == QLatin1Char('_')))
                && (i + word.size() >= sql.size() || !sql.at(i + word.size()).isLetterOrNumber());
        };
        // One literal from i (at its opening quote); returns the index past its closing quote.
        const auto literal = [&](qsizetype i, QString& text) {
            for (++i; i < sql.size(); ++i) {
                if (sql.at(i) != QLatin1Char('\''))
                    text += sql.at(i);
                else if (i + 1 < sql.size() && sql.at(i + 1) == QLatin1Char('\'')) {
                    text += QLatin1Char('\'');
                    ++i;
                } else
                    return i + 1;
            }
            return i;
        };
        const auto skipComment = [&](qsizetype i) {
            const auto eol = sql.indexOf(QLatin1Char('\n'), i);
            return eol < 0 ? sql.size() : eol;
        };
        for (qsizetype i = 0; i < sql.size();) {
            if (sql.mid(i, 2) == QLatin1String("--")) {
                i = skipComment(i);
            } else if (sql.at(i) == QLatin1Char('\'')) {
                QString ignored;
                i = literal(i, ignored);
            } else if (wordAt(i, QLatin1String("RAISE"))) {
                Raise r { file, static_cast<int>(sql.left(i).count(QLatin1Char('\n'))) + 1, {} };
                bool joined = false; // the last thing was a literal, or a literal and ||
                for (i += 5; i < sql.size() && sql.at(i) != QLatin1Char(';');) {
                    if (sql.mid(i, 2) == QLatin1String("--")) {
                        i = skipComment(i);
                    } else if (sql.at(i) == QLatin1Char('\'')) {
                        if (!joined)
                            r.text += QStringLiteral(" | ");
                        i = literal(i, r.text);
                        joined = true;
                    } else if (sql.mid(i, 2) == QLatin1String("||") || sql.at(i).isSpace()) {
                        i += sql.at(i).isSpace() ? 1 : 2;
                    } else {
                        joined = false;
                        ++i;
                    }
                }
                r.text.replace(placeholder, QStringLiteral("1"));
                out.push_back(r);
            } else {
                ++i;
            }
        }
    }
    return out;
}

// Words that follow "idemctl" in prose without naming a command ("idemctl and the console").
const std::set<QString>& proseWords()
{
    static const std::set<QString> words { QStringLiteral("acts"), QStringLiteral("and"), QStringLiteral("binary"),
        QStringLiteral("both"), QStringLiteral("builds"), QStringLiteral("by"), QStringLiteral("command"),
        QStringLiteral("commands"), QStringLiteral("directly"), QStringLiteral("draws"), QStringLiteral("fills"),
        QStringLiteral("leaves"), QStringLiteral("read"), QStringLiteral("reports"), QStringLiteral("running"),
        QStringLiteral("says"), QStringLiteral("sets"), QStringLiteral("spells"), QStringLiteral("stops"),
        QStringLiteral("writes"), QStringLiteral("is"), QStringLiteral("or"), QStringLiteral("of"),
        QStringLiteral("the"), QStringLiteral("to"), QStringLiteral("with"), QStringLiteral("prints"),
        QStringLiteral("refuses"), QStringLiteral("runs"), QStringLiteral("takes"), QStringLiteral("uses") };
    return words;
}

} // namespace

class TestDocs : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void pathsExist();
    void commandsExist();
    void optionsExist();
    void commandListsAgree();
    void rightsTableAgrees();
    void raisesNameRealCommands();

private:
    // The command table as `idemctl --help` prints it, and each command's --help.
    QStringList m_commands;
    std::map<QString, QString> m_help;
    std::vector<Text> m_texts;
    const QString& helpOf(const QString& command);
    // A command idemctl runs but does not list (scenario-worker, which verify starts).
    bool isCommand(const QString& word);
    std::map<QString, bool> m_known;
};

bool TestDocs::isCommand(const QString& word)
{
    auto it = m_known.find(word);
    if (it == m_known.end()) {
        const auto run = idemctl({ word, QStringLiteral("--help") });
        it = m_known.emplace(word, !run.err.contains(QStringLiteral("unknown command"))).first;
    }
    return it->second;
}

const QString& TestDocs::helpOf(const QString& command)
{
    auto it = m_help.find(command);
    if (it == m_help.end()) {
        const auto run = idemctl({ command, QStringLiteral("--help") });
        it = m_help.emplace(command, run.exitCode == 0 ? run.out : QString()).first;
    }
    return it->second;
}

void TestDocs::initTestCase()
{
    QVERIFY2(!sourceDir().isEmpty(), "IDEM_SOURCE_DIR is not set (run the test through ctest)");
    const auto run = idemctl({ QStringLiteral("--help") });
    QVERIFY2(run.exitCode == 0, qPrintable(idem::test::describe(run)));
    static const QRegularExpression row(QStringLiteral(R"(^  ([a-z][a-z0-9-]*)  )"));
    bool inTable = false;
    for (const auto& line : run.out.split(QLatin1Char('\n'))) {
        if (line.startsWith(QLatin1String("Commands:")))
            inTable = true;
        else if (inTable && line.isEmpty())
            inTable = false;
        else if (inTable)
            if (const auto m = row.match(line); m.hasMatch())
                m_commands << m.captured(1);
    }
    QVERIFY2(m_commands.contains(QStringLiteral("migrate")), qPrintable(run.out));
    m_texts = allTexts();
    QVERIFY(m_texts.size() > 1000);
}

// A path of the repository that a text names exists (a module named without its extension,
// operations/actions, when its .h or .cpp does); placeholders (NAME, NNNN, <area>, *) are not paths.
void TestDocs::pathsExist()
{
    static const QRegularExpression path(QStringLiteral(
        R"((?<![\w/.-])((?:core|operations|models|views|app|cli|schema|resources|tests|scripts|docs|packaging|bench|fuzz|examples|clients|translations|seed)/[\w./-]*))"));
    static const QRegularExpression link(QStringLiteral(R"(\]\(([^)#\s]+)(#[^)]*)?\))"));
    static const QRegularExpression placeholder(QStringLiteral(R"((^|/)[A-Z]{3,}[\w.]*$|(^|/|_)[A-Z]{3,}(_|\.|$))"));
    QStringList missing;
    const auto exists = [](const QString& p) {
        const QString full = sourceDir() + QLatin1Char('/') + p;
        return QFileInfo::exists(full) || QFileInfo::exists(full + QStringLiteral(".h"))
            || QFileInfo::exists(full + QStringLiteral(".cpp"));
    };
    for (const auto& t : m_texts) {
        for (auto it = path.globalMatch(t.text); it.hasNext();) {
            const auto m = it.next();
            QString p = m.captured(1);
            while (p.endsWith(QLatin1Char('.')) || p.endsWith(QLatin1Char(',')) || p.endsWith(QLatin1Char(':')))
                p.chop(1);
            const QChar next = m.capturedEnd(1) < t.text.size() ? t.text.at(m.capturedEnd(1)) : QChar();
            if (next == QLatin1Char('<') || next == QLatin1Char('*') || next == QLatin1Char('{')
                || next == QLatin1Char('$') || placeholder.match(p).hasMatch() || p.contains(QLatin1String(".."))
                || p.contains(QLatin1String("/dist/"))) // what a client's build writes

                continue;
            if (!exists(p))
                missing << where(t) + QStringLiteral(": ") + p;
        }
        if (!t.file.endsWith(QLatin1String(".md")) || t.code)
            continue;
        for (auto it = link.globalMatch(t.text); it.hasNext();) {
            const QString target = it.next().captured(1);
            if (target.contains(QLatin1String("://")) || target.startsWith(QLatin1String("mailto:")))
                continue;
            const QString dir = QFileInfo(t.file).path();
            const QString p = QDir::cleanPath(dir == QLatin1String(".") ? target : dir + QLatin1Char('/') + target);
            if (!exists(p))
                missing << where(t) + QStringLiteral(": link ") + target;
        }
    }
    missing.removeDuplicates();
    QVERIFY2(missing.isEmpty(),
        qPrintable(QStringLiteral("named but not in the repository:\n") + missing.join(QLatin1Char('\n'))));
}

// "idemctl WORD" names a command of the table (or one it runs itself, such as scenario-worker,
// which it does not call unknown), or is prose (a short list of words).
void TestDocs::commandsExist()
{
    static const QRegularExpression mention(QStringLiteral(R"(\bidemctl\s+([a-z][a-z0-9-]*))"));
    QStringList wrong;
    for (const auto& t : m_texts) {
        for (auto it = mention.globalMatch(t.text); it.hasNext();) {
            const QString word = it.next().captured(1);
            if (m_commands.contains(word) || proseWords().count(word) || isCommand(word))
                continue;
            wrong << where(t) + QStringLiteral(": idemctl ") + word;
        }
    }
    wrong.removeDuplicates();
    QVERIFY2(wrong.isEmpty(),
        qPrintable(
            QStringLiteral(
                "no such idemctl command (`idemctl --help` lists them; a word of prose after \"idemctl\" goes into "
                "proseWords() in this test):\n")
            + wrong.join(QLatin1Char('\n'))));
}

// In code (a span, a block, a man page's command line), every --option after "idemctl COMMAND" is
// one that `idemctl COMMAND --help` lists.
void TestDocs::optionsExist()
{
    static const QRegularExpression command(QStringLiteral(R"(\bidemctl\s+([a-z][a-z0-9-]*)(.*))"));
    static const QRegularExpression option(QStringLiteral(R"((?<![\w-])--([a-z][a-z0-9-]*))"));
    QStringList wrong;
    int checked = 0;
    for (const auto& t : m_texts) {
        if (!t.code)
            continue;
        const auto m = command.match(t.text);
        if (!m.hasMatch() || !m_commands.contains(m.captured(1)))
            continue;
        const QString& help = helpOf(m.captured(1));
        // The rest of this command only: a second "idemctl" starts another.
        const QString rest = m.captured(2).section(QStringLiteral("idemctl "), 0, 0);
        for (auto it = option.globalMatch(rest); it.hasNext();) {
            const QString name = it.next().captured(1);
            ++checked;
            if (name == QLatin1String("help"))
                continue;
            const QRegularExpression listed(
                QStringLiteral(R"((?<![\w-])--%1(?![\w-]))").arg(QRegularExpression::escape(name)));
            if (!listed.match(help).hasMatch())
                wrong << where(t) + QStringLiteral(": idemctl ") + m.captured(1) + QStringLiteral(" --") + name;
        }
    }
    QVERIFY(checked > 100);
    wrong.removeDuplicates();
    QVERIFY2(wrong.isEmpty(),
        qPrintable(QStringLiteral("an option its command's --help does not list:\n") + wrong.join(QLatin1Char('\n'))));
}

// The operator's guide's command table and the man page list every command, and no other.
void TestDocs::commandListsAgree()
{
    QStringList guide;
    const QString text = readFile(QStringLiteral("docs/operators-guide.md"));
    const auto start = text.indexOf(QLatin1String("\n## idemctl\n"));
    QVERIFY(start >= 0);
    const QString section = text.mid(start, text.indexOf(QLatin1String("\n## "), start + 5) - start);
    static const QRegularExpression row(QStringLiteral(R"(^\| `idemctl ([a-z][a-z0-9-]*)((?:\\\|[a-z][a-z0-9-]*)*))"),
        QRegularExpression::MultilineOption);
    static const QRegularExpression more(QStringLiteral(R"( / `idemctl ([a-z][a-z0-9-]*))"));
    for (auto it = row.globalMatch(section); it.hasNext();) {
        const auto m = it.next();
        guide << m.captured(1);
        for (const auto& alt : m.captured(2).split(QStringLiteral("\\|"), Qt::SkipEmptyParts))
            guide << alt;
        const QString line
            = section.mid(m.capturedStart(), section.indexOf(QLatin1Char('\n'), m.capturedStart()) - m.capturedStart());
        for (auto j = more.globalMatch(line); j.hasNext();)
            guide << j.next().captured(1);
    }
    guide.removeDuplicates();
    guide.sort();
    QStringList commands = m_commands;
    commands.sort();
    QCOMPARE(guide, commands);

    QStringList man;
    std::vector<Text> texts;
    manTexts(QStringLiteral("packaging/idemctl.1"), texts);
    const QStringList manLines = readFile(QStringLiteral("packaging/idemctl.1")).split(QLatin1Char('\n'));
    static const QRegularExpression entry(QStringLiteral(R"(^idemctl ([a-z][a-z0-9-]*)(( \| [a-z][a-z0-9-]*)*))"));
    for (const auto& t : texts) {
        // Entries only (.TP, .B COMMAND), not the examples.
        const auto m = entry.match(t.text);
        if (t.code && m.hasMatch() && manLines.value(t.line - 1).startsWith(QLatin1String(".B ")))
            man << m.captured(1);
    }
    man.removeDuplicates();
    for (const auto& c : commands)
        QVERIFY2(man.contains(c), qPrintable(QStringLiteral("packaging/idemctl.1 has no entry for ") + c));
    for (const auto& c : man)
        QVERIFY2(commands.contains(c),
            qPrintable(QStringLiteral("packaging/idemctl.1 describes a command idemctl lacks: ") + c));
}

// README's table of rights against the one list of them (resources/sql/functions/idem_right_list.sql,
// read here as text: no database): one row per right, by its name and the role that grants it,
// and idem_operator's row, which names every right it does not hold.
void TestDocs::rightsTableAgrees()
{
    const QString list = readFile(QStringLiteral("resources/sql/functions/idem_right_list.sql"));
    static const QRegularExpression listRow(
        QStringLiteral(R"(^\s*\(\d+, '([a-z_]+)', '(idem_[a-z_]+)'(?:::name)?, (true|false), ')"),
        QRegularExpression::MultilineOption);
    QStringList expected;
    QStringList notOperators;
    for (auto it = listRow.globalMatch(list); it.hasNext();) {
        const auto m = it.next();
        expected << m.captured(1) + QLatin1Char(' ') + m.captured(2);
        if (m.captured(3) == QLatin1String("false"))
            notOperators << m.captured(1);
    }
    QVERIFY2(expected.size() >= 8, qPrintable(expected.join(QLatin1Char(','))));

    const QString text = readFile(QStringLiteral("README.md"));
    const auto start = text.indexOf(QLatin1String("| Right | Role |"));
    QVERIFY(start >= 0);
    QStringList rows;
    QString operatorRow;
    static const QRegularExpression row(QStringLiteral(R"(^\| ([^|]+) \| `(idem_[a-z_]+)` \|)"));
    for (const auto& line : text.mid(start).split(QLatin1Char('\n')).mid(2)) {
        if (!line.startsWith(QLatin1Char('|')))
            break;
        const auto m = row.match(line);
        QVERIFY2(m.hasMatch(), qPrintable(line));
        if (m.captured(2) == QLatin1String("idem_operator"))
            operatorRow = m.captured(1);
        else
            rows << m.captured(1) + QLatin1Char(' ') + m.captured(2);
    }
    QCOMPARE(rows, expected);
    QVERIFY2(!operatorRow.isEmpty(), "no idem_operator row");
    for (const auto& right : notOperators)
        QVERIFY2(operatorRow.contains(right), qPrintable(operatorRow + QStringLiteral(" leaves out ") + right));
}

// Issue 44 item 3: a HINT (or a message) of a function that tells a person to run an idemctl
// command names one that exists: the command, its sub-command when it has some (the words its
// --help shows after "idemctl COMMAND"), and each --option its --help lists; and
// `idemctl COMMAND [SUB] --help` runs. A hint of `--sha256`, which idemctl refuses, fails here.
void TestDocs::raisesNameRealCommands()
{
    static const QRegularExpression mention(QStringLiteral(R"(\bidemctl\s+([a-z][a-z0-9-]*)(.*))"));
    static const QRegularExpression option(QStringLiteral(R"((?<![\w-])--([a-z][a-z0-9-]*))"));
    static const QRegularExpression end(QStringLiteral(R"re([;()",|]|\.(\s|$)|\bidemctl\b)re"));
    static const QRegularExpression firstWord(QStringLiteral(R"(^\s*([a-z][a-z0-9-]*))"));
    QStringList wrong;
    int commands = 0;
    int options = 0;
    const auto raises = functionRaises();
    QVERIFY(raises.size() > 150);
    for (const auto& r : raises) {
        for (qsizetype at = 0;;) {
            const auto m = mention.match(r.text, at);
            if (!m.hasMatch())
                break;
            at = m.capturedStart(2);
            const QString where = r.file + QLatin1Char(':') + QString::number(r.line) + QStringLiteral(": idemctl ");
            const QString command = m.captured(1);
            ++commands;
            if (!m_commands.contains(command)) {
                wrong << where + command + QStringLiteral(" (no such command)");
                continue;
            }
            // This command's words only: up to the end of its clause, or the next "idemctl".
            QString rest = m.captured(2);
            if (const auto e = end.match(rest); e.hasMatch())
                rest.truncate(e.capturedStart());
            // Its sub-commands, as its --help writes them ("idemctl job approve ...").
            QStringList subs;
            const QRegularExpression usage(
                QStringLiteral(R"(\bidemctl %1 ([a-z][a-z0-9-]*))").arg(QRegularExpression::escape(command)));
            for (auto it = usage.globalMatch(helpOf(command)); it.hasNext();)
                subs << it.next().captured(1);
            QStringList run { command };
            QString named = command;
            if (!subs.isEmpty()) {
                const QString sub = firstWord.match(rest).captured(1);
                if (!subs.contains(sub)) {
                    wrong << where + command + QLatin1Char(' ') + sub + QStringLiteral(" (its sub-commands: ")
                            + subs.join(QStringLiteral(", ")) + QLatin1Char(')');
                    continue;
                }
                run << sub;
                named += QLatin1Char(' ') + sub;
            }
            run << QStringLiteral("--help");
            const auto help = idemctl(run);
            if (help.exitCode != 0) {
                wrong << where + named + QStringLiteral(" --help exits ") + QString::number(help.exitCode);
                continue;
            }
            for (auto it = option.globalMatch(rest); it.hasNext();) {
                const QString name = it.next().captured(1);
                ++options;
                const QRegularExpression listed(
                    QStringLiteral(R"((?<![\w-])--%1(?![\w-]))").arg(QRegularExpression::escape(name)));
                if (!listed.match(help.out).hasMatch())
                    wrong << where + named + QStringLiteral(" --") + name + QStringLiteral(" (not an option of it)");
            }
        }
    }
    qInfo("%d mentions of idemctl commands and %d options in %d RAISEs checked", commands, options,
        static_cast<int>(raises.size()));
    QVERIFY2(commands >= 10, qPrintable(QString::number(commands)));
    QVERIFY2(options >= 5, qPrintable(QString::number(options)));
    wrong.removeDuplicates();
    QVERIFY2(wrong.isEmpty(),
        qPrintable(QStringLiteral("a function's RAISE names an idemctl command or option that does not exist:\n")
            + wrong.join(QLatin1Char('\n'))));
}

QTEST_GUILESS_MAIN(TestDocs)
#include "tst_docs.moc"
