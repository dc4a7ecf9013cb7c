#include <QtTest>

#include <QRegularExpression>
#include <pqxx/pqxx>

#include <set>

#include "schema/migrate.h"
#include "operations/outcomeseries.h"
#include "operations/snapshotreport.h"
#include "tests/support/testdb.h"

using idem::test::ScratchDatabase;

// The one table of outcome series (operations/outcomeseries) against what the database accepts:
// an outcome the schema counts but the table lacks would be drawn as zero by the console, the
// snapshot viewer and the report alike (the viewer drew failed retries as zero for this reason).
class TestOutcomeSeries : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void everyOutcomeTheSchemaCountsIsInTheTable();
    void reportDrawsFailedRetries();
    void reportLegendStaysInsideTheChart();

private:
    std::unique_ptr<ScratchDatabase> m_db;
};

void TestOutcomeSeries::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("outcomeseries", idem::test::migrated);
    auto conn = m_db->connect();
    idem::migrate(*conn, { idem::SchemaName(), false });
}

void TestOutcomeSeries::everyOutcomeTheSchemaCountsIsInTheTable()
{
    // The oracle: the CHECK on idem_counters.outcome as the migrated schema has it.
    auto conn = m_db->connect();
    pqxx::read_transaction t(*conn);
    const auto r = t.exec(R"(
        SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c
         WHERE c.conrelid = 'idem.idem_counters'::regclass AND c.contype = 'c'
           AND pg_get_constraintdef(c.oid) LIKE '%outcome%')");
    QCOMPARE(r.size(), 1);
    const QString check = QString::fromStdString(r[0][0].as<std::string>());
    std::set<std::string> accepted;
    auto it = QRegularExpression(QStringLiteral("'([a-z_]+)'")).globalMatch(check);
    while (it.hasNext())
        accepted.insert(it.next().captured(1).toStdString());
    QVERIFY2(accepted.size() >= 15, qPrintable(check));

    std::set<std::string> inReport;
    for (const auto& s : idem::outcomeSeries())
        if (s.places & idem::InReport)
            for (const char* o : s.outcomes)
                inReport.insert(o);
    for (const auto& name : accepted) {
        QVERIFY2(idem::outcomeField(name), ("no bucket field for outcome " + name).c_str());
        QVERIFY2(inReport.count(name), ("no report series draws outcome " + name).c_str());
    }
    for (const auto& f : idem::outcomeFields())
        QVERIFY2(accepted.count(f.name), (std::string("the schema does not count ") + f.name).c_str());
    // The console's charts come from the same table: failed retries among them.
    const auto console = idem::outcomeSeries(idem::OutcomeChart::Failures, idem::InConsole);
    QVERIFY(std::any_of(console.begin(), console.end(), [](const auto* s) { return s->id == std::string("failedretries"); }));
}

namespace {
    idem::SnapshotData historyOf(std::initializer_list<std::pair<const char*, std::int64_t>> perMinute)
    {
        idem::SnapshotData d;
        d.takenAt = "2026-01-02T10:05:30.000000Z";
        d.historyMinutes = 5;
        int minute = 1;
        for (const auto& [outcome, n] : perMinute) {
            idem::SnapshotCounter c;
            c.bucket = "2026-01-02T10:0" + std::to_string(minute++) + ":00Z";
            c.tenant = "ta";
            c.operation = "charge";
            c.outcome = outcome;
            c.n = n;
            d.history.rows.push_back(c);
        }
        return d;
    }

    // The y of each point of the polyline drawn for `series`.
    std::vector<double> polylineYs(const std::string& svg, const std::string& series)
    {
        const auto at = svg.find("data-series=\"" + series + "\"");
        if (at == std::string::npos)
            return {};
        const auto from = svg.find("points=\"", at) + 8;
        const auto points = QString::fromStdString(svg.substr(from, svg.find('"', from) - from));
        std::vector<double> ys;
        for (const auto& p : points.split(QLatin1Char(' '), Qt::SkipEmptyParts))
            ys.push_back(p.section(QLatin1Char(','), 1, 1).toDouble());
        return ys;
    }
} // namespace

void TestOutcomeSeries::reportDrawsFailedRetries()
{
    const auto d = historyOf({ { "retry_failed", 700 }, { "retry_failed", 350 }, { "acquired", 5 } });
    const auto charts = idem::snapshotCharts(d);
    const auto retries = std::find_if(charts.begin(), charts.end(), [](const auto& c) { return c.name == "retries"; });
    QVERIFY(retries != charts.end());
    QVERIFY(retries->svg.find(">failed retries</text>") != std::string::npos);
    const auto ys = polylineYs(retries->svg, "failedretries");
    QCOMPARE(ys.size(), std::size_t(5));
    // 10:01 700, 10:02 350, then nothing: the 700 is the peak, higher on the page than the 350
    // (smaller y), and the quiet minutes lie on the baseline.
    QVERIFY(ys[0] < ys[1]);
    QVERIFY(ys[1] < ys[2]);
    QCOMPARE(ys[2], ys[4]);
}

void TestOutcomeSeries::reportLegendStaysInsideTheChart()
{
    for (const auto& chart : idem::snapshotCharts(historyOf({ { "exhausted", 1 } }))) {
        const int width = QString::fromStdString(chart.svg).section(QStringLiteral("width=\""), 1, 1).section(QLatin1Char('"'), 0, 0).toInt();
        QVERIFY(width > 0);
        // Each legend text, at its x, with the width the layout reserves for it (6.5 px a character).
        auto it = QRegularExpression(QStringLiteral("<text x=\"([0-9.]+)\" y=\"[0-9]+\">([^<]+)</text>"))
                      .globalMatch(QString::fromStdString(chart.svg));
        int legend = 0;
        while (it.hasNext()) {
            const auto m = it.next();
            const double right = m.captured(1).toDouble() + 6.5 * double(m.captured(2).size());
            QVERIFY2(right <= width, qPrintable(QString::fromStdString(chart.name) + QStringLiteral(": ") + m.captured(2)));
            ++legend;
        }
        QVERIFY(legend >= 1);
    }
}

QTEST_GUILESS_MAIN(TestOutcomeSeries)
#include "tst_outcomeseries.moc"
