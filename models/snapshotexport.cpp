#include "models/snapshotexport.h"

#include <QBuffer>
#include <QCoreApplication>
#include <QImage>
#include <QPageLayout>
#include <QPageSize>
#include <QPdfWriter>
#include <QTextDocument>
#include <QUrl>

#include <algorithm>
#include <chrono>
#include <condition_variable>

#include "operations/signing.h"
#include "operations/snapshotbundle.h"
#include "models/consolesession.h"

namespace idem::console {

namespace {
    // The stages operations/snapshot reports, for the translators (QCoreApplication::translate finds them).
    [[maybe_unused]] const char* const coreStages[] = {
        QT_TRANSLATE_NOOP("idem::console::SnapshotExporter", "opening the snapshot transaction"),
        QT_TRANSLATE_NOOP("idem::console::SnapshotExporter", "reading the figures"),
        QT_TRANSLATE_NOOP("idem::console::SnapshotExporter", "reading rows"),
        QT_TRANSLATE_NOOP("idem::console::SnapshotExporter", "reading the counters history"),
        QT_TRANSLATE_NOOP("idem::console::SnapshotExporter", "reading the audit tail"),
        QT_TRANSLATE_NOOP("idem::console::SnapshotExporter", "read"),
        QT_TRANSLATE_NOOP("idem::console::SnapshotExporter", "writing snapshot.json"),
        QT_TRANSLATE_NOOP("idem::console::SnapshotExporter", "writing CSV files"),
        QT_TRANSLATE_NOOP("idem::console::SnapshotExporter", "drawing charts"),
        QT_TRANSLATE_NOOP("idem::console::SnapshotExporter", "writing report.html"),
        QT_TRANSLATE_NOOP("idem::console::SnapshotExporter", "writing the chart images"),
        QT_TRANSLATE_NOOP("idem::console::SnapshotExporter", "writing report.pdf"),
        QT_TRANSLATE_NOOP("idem::console::SnapshotExporter", "writing MANIFEST"),
        QT_TRANSLATE_NOOP("idem::console::SnapshotExporter", "loading the signing key"),
        QT_TRANSLATE_NOOP("idem::console::SnapshotExporter", "done"),
    };

    // One progress bar from 0 to 1: reading, then the files, then the PDF, then the manifest.
    idem::SnapshotProgress slice(const idem::SnapshotProgress& p, double from, double to)
    {
        idem::SnapshotProgress out = p;
        if (p.progress)
            out.progress
                = [p, from, to](std::string_view stage, double f) { p.progress(stage, from + f * (to - from)); };
        return out;
    }

    constexpr double readEnd = 0.5, filesEnd = 0.75, pdfEnd = 0.92;

    QString rowsLine(const idem::SnapshotRowSet& s)
    {
        return SnapshotExporter::tr("%1: %2 of %3 rows%4")
            .arg(QString::fromStdString(s.name), QString::number(s.rows.size()), QString::number(s.total),
                s.truncated ? SnapshotExporter::tr(" (bound %1 reached)").arg(s.limit) : QString());
    }
} // namespace

QString translatedStage(const std::string& stage)
{
    const auto colon = stage.find(": ");
    const std::string head = colon == std::string::npos ? stage : stage.substr(0, colon);
    QString text = QCoreApplication::translate("idem::console::SnapshotExporter", head.c_str());
    if (colon != std::string::npos)
        text += QStringLiteral(": ") + QString::fromStdString(stage.substr(colon + 2));
    return text;
}

namespace {
    constexpr double maxImageWidth = 620; // device-independent pixels

    // report.html keeps timestamps on one line, which a browser can scroll sideways; on a page
    // QTextDocument squeezes the key column to one character instead (a 50-row table then takes
    // pages). On paper the date and the time may wrap, and the tables are set a size smaller.
    QString printableHtml(QString html)
    {
        html.replace(QStringLiteral("white-space: nowrap"), QStringLiteral("white-space: normal"));
        html.replace(QStringLiteral("th, td {"), QStringLiteral("th, td { font-size: 8pt;"));
        return html;
    }
} // namespace

QByteArray renderReportPdf(
    const QString& html, const std::vector<std::pair<QString, QByteArray>>& images, const QString& title)
{
    QByteArray pdf;
    QBuffer buffer(&pdf);
    buffer.open(QIODevice::WriteOnly);
    {
        QPdfWriter writer(&buffer);
        writer.setTitle(title);
        writer.setCreator(QStringLiteral("Idem console"));
        // QTextDocument::print() of a document without a page size adds 2 cm margins of its own:
        // those are the page's margins.
        writer.setPageLayout(QPageLayout(
            QPageSize(QPageSize::A4), QPageLayout::Portrait, QMarginsF(0, 0, 0, 0), QPageLayout::Millimeter));
        writer.setResolution(300);
        QTextDocument doc;
        doc.setDocumentMargin(0);
        for (const auto& [path, png] : images) {
            QImage image = QImage::fromData(png, "PNG");
            if (image.isNull())
                continue;
            // The text is 170 mm wide (A4 less the margins), about 640 px at 96 dpi: a wider image
            // keeps every pixel and is laid out smaller (the charts come at twice their size).
            image.setDevicePixelRatio(std::max(1.0, double(image.width()) / maxImageWidth));
            doc.addResource(QTextDocument::ImageResource, QUrl(path), image);
        }
        doc.setHtml(printableHtml(html));
        doc.print(&writer);
    }
    buffer.close();
    return pdf;
}

QString thresholdMetric(Tile tile) { return QString::fromLatin1(tileSpec(tile).metric); }

std::vector<idem::SnapshotThreshold> snapshotThresholds(const DashboardSettings& settings)
{
    std::vector<idem::SnapshotThreshold> out;
    for (int i = 0; i < tileCount; ++i) {
        const auto tile = static_cast<Tile>(i);
        const Threshold& t = settings.thresholds[static_cast<std::size_t>(i)];
        if (!t.warning && !t.critical)
            continue;
        const double scale = 1.0 / tileUnitsPerFigureUnit(tile);
        idem::SnapshotThreshold s;
        s.metric = thresholdMetric(tile).toStdString();
        if (t.warning)
            s.warning = *t.warning * scale;
        if (t.critical)
            s.critical = *t.critical * scale;
        out.push_back(s);
    }
    return out;
}

SnapshotExportResult runSnapshotExport(pqxx::connection& conn, const idem::SchemaName& schema,
    const SnapshotExportRequest& request, const idem::SnapshotProgress& progress)
{
    SnapshotExportResult result;
    result.path = request.target;
    try {
        std::optional<idem::SigningKey> key;
        if (!request.signingKeyPath.isEmpty()) {
            progress.report("loading the signing key", 0.0);
            key = idem::SigningKey::load(request.signingKeyPath.toStdString());
        }
        // The temporary directory before the read: a target that exists or a directory that
        // refuses files is said at once, not after the database work.
        idem::BundleWriter writer(request.target.toStdString(), request.overwrite);
        idem::SnapshotOptions options = request.options;
        options.schema = schema;
        auto data = idem::readSnapshot(conn, options, request.context, slice(progress, 0.0, readEnd));

        progress.checkCancel();
        progress.report("writing the chart images", readEnd);
        std::vector<ChartImage> charts = request.charts;
        if (request.drawCharts) {
            auto drawn = request.drawCharts(data);
            charts.insert(charts.end(), std::make_move_iterator(drawn.begin()), std::make_move_iterator(drawn.end()));
        }
        std::vector<idem::ReportImage> images;
        std::vector<std::pair<QString, QByteArray>> pngs;
        for (const auto& c : charts) {
            const std::string path = "charts/" + c.name.toStdString() + ".png";
            writer.add(path, std::string_view(c.png.constData(), static_cast<std::size_t>(c.png.size())));
            images.push_back({ c.title.toStdString(), path });
            pngs.emplace_back(QString::fromStdString(path), c.png);
        }
        const std::optional<idem::SigningKey>& k = key;
        idem::addSnapshotFiles(writer, data, k ? &*k : nullptr, images, slice(progress, readEnd, filesEnd));

        if (request.pdf) {
            progress.checkCancel();
            progress.report("writing report.pdf", filesEnd);
            // The same page as report.html (addSnapshotFiles wrote it from the same values).
            const auto html = QString::fromStdString(idem::snapshotReportHtml(data, images));
            const auto pdf = renderReportPdf(html, pngs,
                SnapshotExporter::tr("Idem incident snapshot %1").arg(QString::fromStdString(data.takenAt)));
            writer.add("report.pdf", std::string_view(pdf.constData(), static_cast<std::size_t>(pdf.size())));
        }

        // The last chance to cancel: after this the bundle is in place.
        progress.checkCancel();
        progress.report("writing MANIFEST", pdfEnd);
        writer.commit(k ? &*k : nullptr);
        progress.report("done", 1.0);

        result.takenAt = QString::fromStdString(data.takenAt);
        if (data.signingKeyFingerprint)
            result.keyFingerprint = QString::fromStdString(*data.signingKeyFingerprint);
        for (const auto& s : data.rowSets)
            result.summary << rowsLine(s);
        result.summary << SnapshotExporter::tr("audit: %1 of %2 entries, chain head %3")
                              .arg(data.audit.tail.size())
                              .arg(data.audit.total)
                              .arg(data.audit.headHash
                                      ? QString::fromStdString(data.audit.headHash->substr(0, 16)) + QStringLiteral("…")
                                      : SnapshotExporter::tr("(empty)"));
    } catch (const idem::SnapshotCancelled&) {
        result.cancelled = true; // the writer is gone: so is its temporary directory
    }
    return result;
}

namespace {
    // Runs draw(data) on context's thread while the calling (worker) thread waits for it. Until
    // the drawing has begun the wait gives way to a cancel, and to a thread that never gets to
    // it (the window closing waits for the worker): then nothing of data is touched.
    std::vector<ChartImage> drawOn(QObject* context,
        const std::function<std::vector<ChartImage>(const idem::SnapshotData&)>& draw, const idem::SnapshotData& data,
        const std::atomic_bool& cancel)
    {
        struct Handoff {
            std::mutex mutex;
            std::condition_variable done;
            bool started = false, finished = false, abandoned = false;
            std::vector<ChartImage> images;
            std::string error;
        };
        auto h = std::make_shared<Handoff>();
        const idem::SnapshotData* d = &data;
        QMetaObject::invokeMethod(
            context,
            [h, draw, d] {
                {
                    const std::lock_guard lock(h->mutex);
                    if (h->abandoned)
                        return;
                    h->started = true;
                }
                std::vector<ChartImage> images;
                std::string error;
                try {
                    images = draw(*d);
                } catch (const std::exception& e) {
                    error = e.what();
                }
                {
                    const std::lock_guard lock(h->mutex);
                    h->images = std::move(images);
                    h->error = std::move(error);
                    h->finished = true;
                }
                h->done.notify_all();
            },
            Qt::QueuedConnection);
        using namespace std::chrono_literals;
        const auto deadline = std::chrono::steady_clock::now() + 30s;
        std::unique_lock lock(h->mutex);
        while (!h->finished) {
            if (!h->started && (cancel || std::chrono::steady_clock::now() > deadline)) {
                h->abandoned = true;
                if (cancel)
                    throw idem::SnapshotCancelled();
                throw std::runtime_error("the console did not draw the charts within 30 s");
            }
            h->done.wait_for(lock, 50ms);
        }
        if (!h->error.empty())
            throw std::runtime_error("the charts could not be drawn: " + h->error);
        return std::move(h->images);
    }
} // namespace

SnapshotExporter::SnapshotExporter(ConsoleSession* session, QObject* parent)
    : QObject(parent)
    , m_session(session)
{
    qRegisterMetaType<SnapshotExportResult>();
    m_progressTimer.setInterval(100);
    connect(&m_progressTimer, &QTimer::timeout, this, &SnapshotExporter::publishProgress);
}

SnapshotExporter::~SnapshotExporter()
{
    // The job may still run on the worker: it stops at its next step and removes its files.
    if (m_state)
        m_state->cancel = true;
    if (m_session && m_job)
        m_session->cancel(m_job);
}

bool SnapshotExporter::start(const SnapshotExportRequest& request)
{
    if (running() || !m_session)
        return false;
    auto state = std::make_shared<State>();
    m_state = state;
    m_target = request.target;
    SnapshotExportRequest job = request;
    if (request.drawCharts)
        // On the application's thread, the UI's: the exporter itself may be gone by the time the
        // worker gets there (its destructor cancels the job, and the wait gives way).
        job.drawCharts = [draw = request.drawCharts, state](const idem::SnapshotData& data) {
            return drawOn(QCoreApplication::instance(), draw, data, state->cancel);
        };
    m_job = m_session->submit(
        [state, request = std::move(job)](pqxx::connection& conn, const idem::SchemaName& schema) {
            idem::SnapshotProgress p;
            p.cancel = &state->cancel; // state outlives the job: the lambda holds it
            p.progress = [state](std::string_view stage, double fraction) {
                const std::lock_guard lock(state->mutex);
                state->stage = std::string(stage);
                state->fraction = fraction;
            };
            return QVariant::fromValue(runSnapshotExport(conn, schema, request, p));
        },
        this,
        [this](const QVariant& answer) {
            const auto result = answer.value<SnapshotExportResult>();
            if (result.cancelled)
                finish(Outcome::Cancelled, tr("The export was cancelled. Nothing was written to %1.").arg(m_target),
                    result);
            else
                finish(Outcome::Written, tr("Snapshot written to %1.").arg(result.path), result);
        },
        [this](const Failure& failure) {
            // The job may still be running (a lost connection fails it at once): stop it before it
            // could put a bundle in place.
            if (m_state)
                m_state->cancel = true;
            finish(Outcome::Failed, failureText(failure), {});
        });
    if (m_job)
        m_progressTimer.start();
    return true;
}

void SnapshotExporter::cancel()
{
    if (m_state)
        m_state->cancel = true;
}

void SnapshotExporter::publishProgress()
{
    if (!m_state)
        return;
    std::string stage;
    double fraction = 0;
    {
        const std::lock_guard lock(m_state->mutex);
        stage = m_state->stage;
        fraction = m_state->fraction;
    }
    if (!stage.empty())
        Q_EMIT progressChanged(translatedStage(stage), fraction);
}

void SnapshotExporter::finish(Outcome outcome, const QString& message, const SnapshotExportResult& result)
{
    m_progressTimer.stop();
    m_job = 0;
    m_state.reset();
    Q_EMIT finished(outcome, message, result);
}

QString SnapshotExporter::failureText(const Failure& failure) const
{
    const QString nothing = tr("Nothing was written to %1.").arg(m_target);
    switch (failure.kind) {
    case FailureKind::ConnectionLost:
        return tr("The connection was lost during the export (%1). %2").arg(failure.message, nothing);
    case FailureKind::Query:
        return tr("The database refused a query of the export%1: %2\n%3")
            .arg(failure.sqlstate.isEmpty() ? QString() : QStringLiteral(" (SQLSTATE %1)").arg(failure.sqlstate),
                failure.message, nothing);
    default:
        break;
    }
    return tr("The snapshot could not be written: %1\n%2").arg(failure.message, nothing);
}

} // namespace idem::console
