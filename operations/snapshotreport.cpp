#include "operations/snapshotreport.h"

#include "core/utf8.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

#include "operations/actions.h"
#include "operations/latency.h"
#include "operations/outcomeseries.h"

namespace idem {

namespace {
    // "2024-05-01T12:34:56.789012Z" -> minutes since the epoch; -1 when it does not parse.
    long long epochMinute(const std::string& iso)
    {
        std::tm tm {};
        if (std::sscanf(
                iso.c_str(), "%4d-%2d-%2dT%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min)
            != 5)
            return -1;
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        return static_cast<long long>(timegm(&tm)) / 60;
    }

    std::string hhmm(long long minute)
    {
        const std::time_t t = static_cast<std::time_t>(minute * 60);
        std::tm tm {};
        gmtime_r(&t, &tm);
        char buf[16];
        std::snprintf(buf, sizeof buf, "%02d:%02d", tm.tm_hour, tm.tm_min);
        return buf;
    }

    std::string fmt(double v, const char* f = "%.1f")
    {
        char buf[64];
        std::snprintf(buf, sizeof buf, f, v);
        return buf;
    }

    struct ChartSpec {
        const char* name; // charts/<name>.svg
        OutcomeChart chart;
    };

    const std::vector<ChartSpec>& chartSpecs()
    {
        static const std::vector<ChartSpec> specs = {
            { "claims", OutcomeChart::Claims },
            { "retries", OutcomeChart::Failures },
            { "completions", OutcomeChart::Completions },
        };
        return specs;
    }

    // A round axis maximum: 1, 2 or 5 times a power of ten, at least the data's maximum.
    double niceCeiling(double v)
    {
        if (v <= 0)
            return 1;
        const double p = std::pow(10.0, std::floor(std::log10(v)));
        for (double m : { 1.0, 2.0, 5.0, 10.0 })
            if (m * p >= v)
                return m * p;
        return 10 * p;
    }

    std::string chartSvg(const ChartSpec& spec, const SnapshotData& d)
    {
        const auto series = outcomeSeries(spec.chart, InReport);
        const int w = 760, left = 56, right = 16, bottom = 34, ph0 = 182;
        // The legend wraps at the right edge: where each entry goes, and how many lines it takes.
        std::vector<std::pair<double, int>> legendAt;
        double lx = left;
        int line = 0;
        for (const auto* s : series) {
            const double width = 24 + 6.5 * static_cast<double>(std::string(s->label).size());
            if (lx > left && lx + width - 10 > w - right) {
                lx = left;
                ++line;
            }
            legendAt.emplace_back(lx, line);
            lx += width;
        }
        const int top = 44 + 14 * line, h = top + ph0 + bottom;
        const int minutes = std::max(1, d.historyMinutes);
        const long long end = epochMinute(d.takenAt);
        const long long start = end - minutes + 1;
        std::vector<CounterBucket> buckets(static_cast<std::size_t>(minutes));
        for (const auto& c : d.history.rows) {
            const long long m = epochMinute(c.bucket);
            const auto field = outcomeField(c.outcome);
            if (m < start || m > end || !field)
                continue;
            buckets[static_cast<std::size_t>(m - start)].*field += c.n;
        }
        std::vector<std::vector<double>> values(series.size(), std::vector<double>(minutes, 0));
        for (std::size_t s = 0; s < series.size(); ++s)
            for (int i = 0; i < minutes; ++i)
                values[s][static_cast<std::size_t>(i)]
                    = static_cast<double>(seriesValue(*series[s], buckets[static_cast<std::size_t>(i)]));
        double peak = 0;
        for (const auto& s : values)
            for (double v : s)
                peak = std::max(peak, v);
        const double ymax = niceCeiling(peak);
        const double pw = w - left - right, ph = ph0;
        const auto x = [&](long long i) { return left + (minutes == 1 ? pw / 2 : pw * double(i) / (minutes - 1)); };
        const auto y = [&](double v) { return top + ph - ph * v / ymax; };
        const auto colour = [](const OutcomeSeries& s) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "#%06x", static_cast<unsigned>(s.rgb & 0xffffffu));
            return std::string(buf);
        };

        std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(w) + "\" height=\""
            + std::to_string(h) + "\" viewBox=\"0 0 " + std::to_string(w) + ' ' + std::to_string(h)
            + "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
        svg += "<text x=\"" + std::to_string(left) + "\" y=\"16\" font-size=\"13\" font-weight=\"bold\">"
            + htmlEscape(outcomeChartTitle(spec.chart)) + "</text>\n";
        for (std::size_t i = 0; i < series.size(); ++i) {
            const auto [at, row] = legendAt[i];
            const int ly = 24 + 14 * row;
            svg += "<rect x=\"" + fmt(at) + "\" y=\"" + std::to_string(ly) + "\" width=\"10\" height=\"10\" fill=\""
                + colour(*series[i]) + "\"/>";
            svg += "<text x=\"" + fmt(at + 14) + "\" y=\"" + std::to_string(ly + 9) + "\">"
                + htmlEscape(series[i]->label) + "</text>\n";
        }
        for (int g = 0; g <= 4; ++g) {
            const double v = ymax * g / 4;
            svg += "<line x1=\"" + std::to_string(left) + "\" x2=\"" + std::to_string(w - right) + "\" y1=\""
                + fmt(y(v)) + "\" y2=\"" + fmt(y(v)) + "\" stroke=\"" + (g ? "#e0e0e0" : "#888") + "\"/>";
            svg += "<text x=\"" + std::to_string(left - 6) + "\" y=\"" + fmt(y(v) + 4) + "\" text-anchor=\"end\">"
                + fmt(v, v == std::floor(v) ? "%.0f" : "%.2g") + "</text>\n";
        }
        for (long long i : { 0LL, static_cast<long long>(minutes / 2), static_cast<long long>(minutes - 1) }) {
            svg += "<text x=\"" + fmt(x(i)) + "\" y=\"" + std::to_string(h - bottom + 16) + "\" text-anchor=\"middle\">"
                + (end < 0 ? std::string("?") : hhmm(start + i)) + "</text>\n";
        }
        svg += "<text x=\"" + std::to_string(w - right) + "\" y=\"" + std::to_string(h - 4)
            + "\" text-anchor=\"end\" fill=\"#666\">UTC, one point per minute; the last minute is partial</text>\n";
        for (std::size_t s = 0; s < series.size(); ++s) {
            std::string pts;
            for (int i = 0; i < minutes; ++i)
                pts += fmt(x(i)) + ',' + fmt(y(values[s][static_cast<std::size_t>(i)])) + ' ';
            svg += std::string("<polyline data-series=\"") + series[s]->id
                + "\" fill=\"none\" stroke-width=\"1.6\" stroke=\"" + colour(*series[s]) + "\" points=\"" + pts
                + "\"/>\n";
        }
        if (peak == 0)
            svg += "<text x=\"" + fmt(left + pw / 2) + "\" y=\"" + fmt(top + ph / 2)
                + "\" text-anchor=\"middle\" fill=\"#666\">nothing counted in this window</text>\n";
        return svg + "</svg>\n";
    }

    // "2024-05-01T12:34:56.789012Z" -> "2024-05-01 12:34:56.789" (the report says UTC once).
    std::string shortTime(const std::string& iso)
    {
        if (iso.size() < 19 || iso[10] != 'T')
            return htmlEscape(iso);
        std::string out = iso.substr(0, 10) + ' ' + iso.substr(11, 8);
        if (iso.size() >= 23 && iso[19] == '.')
            out += iso.substr(19, 4);
        return htmlEscape(out);
    }

    std::string optTime(const std::optional<std::string>& v) { return v ? shortTime(*v) : std::string("&ndash;"); }

    std::string setTitle(const std::string& name)
    {
        static const std::map<std::string, std::string> titles
            = { { "expired_leases", "Expired leases" }, { "longest_running", "Longest-running (processing)" },
                  { "failed", "Failed and exhausted" }, { "uncertain", "Uncertain outcomes" },
                  { "waiting_to_retry", "Waiting to retry" } };
        const auto it = titles.find(name);
        return it == titles.end() ? name : it->second;
    }

    std::string opt(const std::optional<std::string>& v) { return v ? htmlEscape(*v) : std::string("&ndash;"); }

    std::string clip(const std::optional<std::string>& v, std::size_t n = 120)
    {
        if (!v)
            return "&ndash;";
        // A redacted value reads better as what it is than as 90 characters of hash.
        static const std::string marker = "redacted:sha256:";
        if (v->rfind(marker, 0) == 0 && v->size() > marker.size() + 65)
            return "<i>redacted</i> (" + htmlEscape(v->substr(marker.size() + 65)) + " bytes, SHA-256 "
                + htmlEscape(v->substr(marker.size(), 12)) + "&hellip;)";
        if (v->size() <= n)
            return htmlEscape(*v);
        // Cut on a UTF-8 character boundary.
        std::size_t cut = n;
        while (cut > 0 && (static_cast<unsigned char>((*v)[cut]) & 0xC0) == 0x80)
            --cut;
        return htmlEscape(v->substr(0, cut)) + "&hellip;";
    }

    // A cell that must not wrap (timestamps, classes) is given as nowrap(text).
    constexpr char nowrapMark = '\x01';
    std::string nowrap(const std::string& html) { return nowrapMark + html; }

    std::string row(const std::vector<std::string>& cells, bool header = false)
    {
        std::string out = "<tr>";
        for (const auto& c : cells) {
            if (header)
                out += "<th>" + c + "</th>";
            else if (!c.empty() && c.front() == nowrapMark)
                out += "<td class=\"t\">" + c.substr(1) + "</td>";
            else
                out += "<td>" + c + "</td>";
        }
        return out + "</tr>\n";
    }

    // A figure's tile colour from the exporting console's thresholds (none from idemctl): a class
    // name added to the cell's own (one class attribute; a second one is ignored by browsers).
    std::string level(const SnapshotData& d, const std::string& metric, std::optional<double> value)
    {
        if (!value)
            return {};
        for (const auto& t : d.thresholds) {
            // <figure>_per_claim: a count's threshold as a fraction of the window's claims (the
            // console's event tiles); any event without a claim counts as all of them.
            if (t.metric == metric + "_per_claim") {
                const double share = d.figures.claims > 0 ? *value / static_cast<double>(d.figures.claims)
                                                          : (*value > 0 ? 1.0 : 0.0);
                if (t.critical && share >= *t.critical)
                    return " crit";
                if (t.warning && share >= *t.warning)
                    return " warn";
                continue;
            }
            if (t.metric != metric)
                continue;
            if (t.critical && *value >= *t.critical)
                return " crit";
            if (t.warning && *value >= *t.warning)
                return " warn";
        }
        return {};
    }
} // namespace

std::string htmlEscape(const std::string& text)
{
    std::string out;
    out.reserve(text.size());
    // Every text of the report and the charts passes here: display controls (bidi overrides,
    // U+2028, C1) shown as escapes, never acted on by the browser or the PDF.
    for (char c : displaySafe(text, reportDisplay)) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            // Control characters are not allowed in HTML text (and \x01 marks a cell for row()).
            out += (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') ? '?' : c;
        }
    }
    return out;
}

std::vector<SnapshotChart> snapshotCharts(const SnapshotData& data)
{
    std::vector<SnapshotChart> charts;
    for (const auto& spec : chartSpecs())
        charts.push_back({ spec.name, outcomeChartTitle(spec.chart), chartSvg(spec, data) });
    return charts;
}

namespace {
    // The report's sections, in its order: each returns its HTML (empty when the snapshot lacks it).
    std::string n(std::int64_t v) { return std::to_string(v); }

    std::string reportHead(const SnapshotData& d)
    {
        std::string h = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Idem incident snapshot "
            + htmlEscape(d.takenAt) + "</title>\n<style>\n"
            + "body { font-family: sans-serif; font-size: 10pt; margin: 16px; color: #222; }\n"
              "h1 { font-size: 16pt; } h2 { font-size: 12pt; margin-top: 18px; border-bottom: 1px solid #999; }\n"
              "table { border-collapse: collapse; margin: 4px 0 8px 0; }\n"
              "th, td { border: 1px solid #bbb; padding: 2px 6px; text-align: left; vertical-align: top; }\n"
              "th { background: #eee; } td.num { text-align: right; } .note { color: #555; }\n"
              ".warn { background: #fff3c4; } .crit { background: #f8c8c8; } code { font-size: 9pt; }\n"
              "td.t { white-space: nowrap; }\n"
              "</style></head><body>\n";
        h += "<h1>Idem incident snapshot</h1>\n<table>\n";
        h += row({ "Taken at (server clock, UTC)", shortTime(d.takenAt) });
        h += row({ "Produced by", htmlEscape(d.producer) });
        h += row({ "Database", htmlEscape(d.database) + ", schema <code>" + htmlEscape(d.schema) + "</code>" });
        h += row({ "Connection", "<code>" + htmlEscape(d.conninfo) + "</code>" });
        h += row({ "Server", htmlEscape(d.serverVersion) + (d.inRecovery ? " (standby)" : " (primary)") });
        h += row({ "Schema version", n(d.schemaVersion) + " (this Idem knows up to " + n(d.schemaLatestKnown) + ")" });
        std::string monitor = htmlEscape(d.currentRole);
        if (d.sessionRole != d.currentRole)
            monitor += " (session " + htmlEscape(d.sessionRole) + ")";
        monitor += d.superuser ? ", superuser"
            : d.memberOperator ? ", idem_operator"
            : d.memberReader   ? ", idem_reader"
                               : "";
        h += row({ "Monitor role", monitor });
        if (d.adminRole || d.adminConninfo)
            h += row({ "Admin role",
                opt(d.adminRole) + (d.adminConninfo ? " on <code>" + htmlEscape(*d.adminConninfo) + "</code>" : "") });
        h += row({ "Scope",
            std::string("tenant ") + (d.tenant ? htmlEscape(*d.tenant) : "(all)") + ", operation "
                + (d.operation ? htmlEscape(*d.operation) : "(all)") + "; figures over " + n(d.windowMinutes)
                + " min, long-unfinished after " + n(d.longUnfinishedAfterMinutes) + " min, charts over "
                + n(d.historyMinutes) + " min" });
        if (d.poll)
            h += row({ "Console polling",
                "every " + n(d.poll->intervalMs) + " ms, statement timeout " + n(d.poll->statementTimeoutMs) + " ms" });
        h += row({ "Redaction",
            d.redacted ? "result_json and error messages replaced by their SHA-256 and length"
                       : "none: results and error messages are included verbatim" });
        h += "</table>\n";
        return h;
    }

    std::string figuresSection(const SnapshotData& d)
    {
        std::string h;
        const auto& f = d.figures;
        const auto dbl
            = [](const std::optional<double>& v, const char* unit) { return v ? fmt(*v) + unit : std::string("&ndash;"); };
        const auto cnt = [](std::int64_t v) { return std::optional<double>(static_cast<double>(v)); };
        h += "<h2>Figures</h2>\n<table>\n" + row({ "figure", "value" }, true);
        const std::vector<std::tuple<const char*, const char*, std::string, std::optional<double>>> figures = {
            { "processing (live leases)", "processing", n(f.processing), cnt(f.processing) },
            { "expired leases", "expired_leases", n(f.expiredLeases), cnt(f.expiredLeases) },
            { "oldest processing age", "oldest_processing_age_seconds", dbl(f.oldestProcessingAgeSeconds, " s"),
                f.oldestProcessingAgeSeconds },
            { "retryable failed", "retryable_failed", n(f.retryableFailed), cnt(f.retryableFailed) },
            { "uncertain outcomes", "uncertain", n(f.uncertain), cnt(f.uncertain) },
            { "failed, permanent", "failed_permanent", n(f.failedPermanent), cnt(f.failedPermanent) },
            { "failed, exhausted", "failed_exhausted", n(f.failedExhausted), cnt(f.failedExhausted) },
            { "long-unfinished", "long_unfinished", n(f.longUnfinished), cnt(f.longUnfinished) },
            { "duplicate ratio (window)", "duplicate_ratio",
                f.duplicateRatio ? fmt(*f.duplicateRatio * 100) + " % of " + n(f.claims) + " claims" : "&ndash;",
                f.duplicateRatio },
            { "retries (window)", "retries", n(f.retries), cnt(f.retries) },
            { "failed retries (window)", "failed_retries", n(f.failedRetries), cnt(f.failedRetries) },
            { "digest conflicts (window)", "digest_conflicts", n(f.digestConflicts), cnt(f.digestConflicts) },
            { "stale-token rejections (window)", "stale_token_rejections", n(f.staleTokenRejections),
                cnt(f.staleTokenRejections) },
            { "total rows (planner estimate)", "total_rows_estimate",
                f.totalRowsEstimate ? n(*f.totalRowsEstimate) : "unknown", std::nullopt },
        };
        for (const auto& [label, metric, text, value] : figures)
            h += "<tr><td>" + std::string(label) + "</td><td class=\"num" + level(d, metric, value) + "\">" + text
                + "</td></tr>\n";
        if (f.inRecovery)
            h += row({ "replication lag", dbl(f.replicationLagSeconds, " s") });
        h += "</table>\n";
        return h;
    }

    std::string chartsSection(const std::vector<ReportImage>& images)
    {
        std::string h;
        if (!images.empty()) {
            h += "<h2>Charts</h2>\n";
            for (const auto& img : images)
                h += "<p><img src=\"" + htmlEscape(img.path) + "\" alt=\"" + htmlEscape(img.title) + "\"></p>\n";
        }
        return h;
    }

    std::string latencySection(const SnapshotData& d)
    {
        std::string h;
        if (d.latency) {
            // Per operation over the history window: the folded minutes merged, percentiles as
            // idem_latency_quantile reads them (latencyQuantile).
            struct Merged {
                std::int64_t n = 0;
                double total = 0;
                std::vector<std::pair<int, std::int64_t>> slots;
            };
            std::map<std::pair<std::string, std::string>, Merged> merged;
            for (const auto& l : d.latency->rows) {
                auto& m = merged[{ l.operation, l.kind }];
                m.n += l.n;
                m.total += l.total;
                mergeSlotCounts(m.slots, l.slotCounts);
            }
            h += "<h2>Latency, " + n(d.historyMinutes) + " min</h2>\n<p class=\"note\">Folded minutes up to "
                + htmlEscape(shortTime(d.latency->foldedTo)) + " UTC (later ones were not folded yet); " + n(d.latency->total)
                + " histogram rows" + (d.latency->truncated ? ", bound " + n(d.latency->limit) + " reached: partial" : "")
                + ". Run: claim to complete or fail; to success: first claim to complete. Percentiles within 3.7 %.</p>\n";
            if (merged.empty())
                h += "<p class=\"note\">No attempt completed or failed in the folded minutes.</p>\n";
            else {
                h += "<table>\n" + row({ "operation", "figure", "count", "mean", "p50", "p95", "p99" }, true);
                for (const auto& [key, m] : merged) {
                    const auto kind = latencyKindFromName(key.second).value_or(LatencyKind::Run);
                    const bool attempts = kind == LatencyKind::Attempts;
                    const auto show = [&](std::optional<double> v) {
                        if (!v)
                            return std::string("&ndash;");
                        char b[32];
                        std::snprintf(b, sizeof b, attempts ? "%.3g" : "%.3g ms", *v);
                        return std::string(b);
                    };
                    const double mean = m.n ? m.total / static_cast<double>(m.n) / (attempts ? 1.0 : 1000.0) : 0.0;
                    h += row({ htmlEscape(key.first), key.second == "tts" ? "to success" : htmlEscape(key.second), n(m.n),
                        show(mean), show(latencyQuantile(kind, m.slots, 0.50)), show(latencyQuantile(kind, m.slots, 0.95)),
                        show(latencyQuantile(kind, m.slots, 0.99)) });
                }
                h += "</table>\n";
            }
        }
        return h;
    }

    std::string eventsSection(const SnapshotData& d)
    {
        std::string h;
        if (d.events) {
            // What explains a change in the charts, newest first; the console's viewer marks them on
            // its time axes.
            const auto& rows = d.events->rows;
            h += "<h2>Events, " + n(d.historyMinutes) + " min: " + n(static_cast<std::int64_t>(rows.size())) + "</h2>\n"
                + "<p class=\"note\">Recovery actions, retention changes and purges, pauses and resumes, annotations "
                  "(<code>idemctl annotate</code>) and deploys"
                + (d.events->truncated ? "; bound " + n(d.events->limit) + " reached: the newest are missing" : "")
                + ".</p>\n";
            if (!rows.empty()) {
                h += "<table>\n" + row({ "at (UTC)", "kind", "tenant", "operation", "by", "text" }, true);
                for (std::size_t i = 0; i < std::min<std::size_t>(rows.size(), 50); ++i) {
                    const auto& e = rows[rows.size() - 1 - i];
                    h += row({ nowrap(shortTime(e.at)), htmlEscape(e.action), htmlEscape(e.tenant), htmlEscape(e.operation),
                        htmlEscape(e.actor), clip(e.text) });
                }
                h += "</table>\n";
            }
        }
        return h;
    }

    std::string pausesSection(const SnapshotData& d)
    {
        std::string h;
        if (d.pauses) {
            const auto& p = *d.pauses;
            const auto active = std::count_if(p.rows.begin(), p.rows.end(), [](const SnapshotPause& x) { return x.active; });
            h += "<h2>Pauses: " + n(static_cast<std::int64_t>(active)) + " in force, " + n(p.total) + " listed</h2>\n"
                + "<p class=\"note\">" + htmlEscape(p.description) + (p.truncated ? "; bound " + n(p.limit) + " reached" : "")
                + ". In <code>pauses.csv</code>.</p>\n";
            if (!p.rows.empty()) {
                h += "<table>\n"
                    + row({ "scope", "state", "why", "by", "since (UTC)", "until (UTC)", "ended (UTC)", "ended by", "why ended" },
                        true);
                for (const auto& x : p.rows)
                    h += row({ nowrap(htmlEscape(x.tenant + ":" + x.operation)),
                        x.active ? std::string("in force") : std::string("ended"),
                        clip(x.reason + (x.ramp ? " (" + *x.ramp + ")" : "")), htmlEscape(x.pausedBy),
                        nowrap(shortTime(x.pausedAt)), nowrap(x.until ? shortTime(*x.until) : std::string("until resumed")),
                        nowrap(optTime(x.endedAt)), opt(x.endedBy), clip(x.endReason) });
                h += "</table>\n";
            }
        }
        return h;
    }

    std::string jobsSection(const SnapshotData& d)
    {
        std::string h;
        if (d.jobs) {
            const auto& jobs = *d.jobs;
            h += "<h2>Recovery jobs: " + n(jobs.total) + "</h2>\n<p class=\"note\">" + htmlEscape(jobs.description)
                + (jobs.truncated ? "; bound " + n(jobs.limit) + " reached" : "") + ". In <code>jobs.csv</code>.</p>\n";
            if (!jobs.rows.empty()) {
                h += "<table>\n"
                    + row({ "job", "state", "action", "started (UTC)", "started by", "why", "approved by", "matched", "changed",
                              "refused", "skipped", "ended (UTC)" },
                        true);
                for (const auto& j : jobs.rows)
                    h += row({ n(j.id), nowrap(htmlEscape(j.state)), htmlEscape(j.action), nowrap(shortTime(j.startedAt)),
                        htmlEscape(j.startedBy), clip(j.reason),
                        j.approvedBy ? htmlEscape(*j.approvedBy)
                                     : std::string(j.needsApproval ? "waiting for approval" : "&ndash;"),
                        n(j.matched), n(j.changed), n(j.refusedMovedOn + j.refusedBusy + j.refusedGone), n(j.skipped),
                        nowrap(optTime(j.finishedAt)) });
                h += "</table>\n";
            }
        }
        return h;
    }

    std::string reconcileSection(const SnapshotData& d)
    {
        std::string h;
        if (d.reconcile && !d.reconcile->probes.empty()) {
            const auto& rc = *d.reconcile;
            h += "<h2>Reconcile: " + n(rc.missing()) + " keys with no effect, " + n(rc.duplicated())
                + " with two or more, in the last " + n(rc.sampled()) + " sampled</h2>\n"
                + "<p class=\"note\">Each probe's last finished run at the instant: of the operation's recently succeeded "
                  "keys it sampled, how many its query counted exactly once (ok), never (missing), more than once "
                  "(duplicated), or could not count (errors); the keys that were not ok, at most 50 a run.</p>\n<table>\n"
                + row({ "operation", "finished (UTC)", "sampled", "ok", "missing", "duplicated", "errors", "keys not ok" }, true);
            for (const auto& s : rc.probes) {
                if (!s.last) {
                    h += row({ htmlEscape(s.probe.operation), "not run yet", "", "", "", "", "", "" });
                    continue;
                }
                const auto& x = *s.last;
                std::string keys;
                for (const auto& o : x.offenders)
                    keys += (keys.empty() ? "" : "<br>") + htmlEscape(o.key) + " ("
                        + (o.count ? n(*o.count) : "error: " + clip(o.error, 120)) + ")";
                h += row({ htmlEscape(s.probe.operation),
                    nowrap(x.finishedAtUs ? shortTime(formatMicros(*x.finishedAtUs)) : std::string("&ndash;")), n(x.sampled),
                    n(x.ok), n(x.missing), n(x.duplicated), n(x.errors),
                    keys + (x.problem.empty() ? std::string() : "<br>" + clip(x.problem)) });
            }
            h += "</table>\n";
        }
        return h;
    }

    std::string horizonSection(const SnapshotData& d)
    {
        std::string h;
        if (d.horizon) {
            const auto& hz = *d.horizon;
            h += "<h2>Transaction horizon: " + n(static_cast<std::int64_t>(hz.holders.size())) + " holder"
                + (hz.holders.size() == 1 ? "" : "s") + ", " + n(hz.deadTotal) + " dead rows</h2>\n"
                + "<p class=\"note\">Who held back the oldest snapshot of the database at the instant (VACUUM cannot "
                  "remove rows that died after it), oldest first, at most 5; the Idem tables' dead rows are the statistics' "
                  "estimate (n_dead_tup), of which the horizon kept at least "
                + n(hz.keptAtLeast) + " (the tables vacuumed since it began)."
                + (hz.ownerSeesAll ? std::string() : std::string(" Other roles' sessions were not visible to the function's owner."))
                + "</p>\n";
            if (!hz.holders.empty()) {
                h += "<table>\n"
                    + row({ "holder", "pid", "role", "application", "client", "state", "transaction began (UTC)", "open for",
                              "transaction ids", "query" },
                        true);
                for (const auto& x : hz.holders)
                    h += row({ htmlEscape(horizonKindName(x.kind) + (x.name.empty() ? "" : " " + x.name)),
                        x.pid ? n(*x.pid) : std::string("&ndash;"), htmlEscape(x.role), htmlEscape(x.application),
                        x.client.empty() ? std::string(x.queryHidden ? "hidden" : "&ndash;") : htmlEscape(x.client),
                        htmlEscape(x.state), nowrap(x.xactStart.empty() ? std::string("&ndash;") : shortTime(x.xactStart)),
                        x.ageSeconds ? n(static_cast<std::int64_t>(*x.ageSeconds)) + " s" : std::string("&ndash;"),
                        n(x.xidAge),
                        x.query.empty() ? std::string(x.queryHidden ? "hidden (pg_read_all_stats shows it)" : "&ndash;")
                                        : clip(x.query) });
                h += "</table>\n";
            }
        }
        return h;
    }

    std::string redriveSection(const SnapshotData& d)
    {
        std::string h;
        if (d.redrive) {
            const auto& rd = *d.redrive;
            h += "<h2>Re-executions: " + n(rd.total) + "</h2>\n<p class=\"note\">" + htmlEscape(rd.description)
                + (rd.truncated ? "; bound " + n(rd.limit) + " reached" : "") + ". "
                + (rd.requestsReadable ? "The exporting role holds read_requests: stored requests are in snapshot.json."
                                       : "The exporting role does not hold read_requests (or the snapshot is redacted): no "
                                         "request's content is in this snapshot.")
                + "</p>\n";
            if (!rd.redrivers.empty()) {
                h += "<table>\n" + row({ "operation", "tenant", "re-driver", "version", "last seen (UTC)", "online" }, true);
                for (const auto& w : rd.redrivers)
                    h += row({ htmlEscape(w.operation), htmlEscape(w.tenant), htmlEscape(w.worker), htmlEscape(w.version),
                        nowrap(shortTime(w.lastSeen)), w.online ? "yes" : "no" });
                h += "</table>\n";
            }
            if (!rd.rows.empty()) {
                h += "<table>\n"
                    + row({ "item", "key", "state", "job", "worker", "tries", "asked (UTC)", "asked by", "ended (UTC)",
                              "request", "detail" },
                        true);
                for (const auto& i : rd.rows)
                    h += row({ n(i.id), htmlEscape(i.key), nowrap(htmlEscape(i.state)), i.jobId ? n(*i.jobId) : "&ndash;",
                        opt(i.worker), n(i.tries), nowrap(shortTime(i.requestedAt)), htmlEscape(i.requestedBy),
                        nowrap(optTime(i.finishedAt)),
                        i.requestStored ? n(i.requestBytes.value_or(0)) + " bytes stored" : std::string("none"),
                        clip(i.detail) });
                h += "</table>\n";
            }
        }
        return h;
    }

    std::string rowSetSections(const SnapshotData& d, int reportRowLimit)
    {
        std::string h;
        for (const auto& s : d.rowSets) {
            const auto shown = std::min<std::size_t>(s.rows.size(), static_cast<std::size_t>(std::max(0, reportRowLimit)));
            h += "<h2>" + htmlEscape(setTitle(s.name)) + ": " + n(s.total) + " row" + (s.total == 1 ? "" : "s") + "</h2>\n";
            h += "<p class=\"note\">" + htmlEscape(s.description) + ". Ordered by " + htmlEscape(s.order) + ". Exported "
                + n(static_cast<std::int64_t>(s.rows.size())) + " (bound " + n(s.limit) + (s.truncated ? ", reached" : "")
                + ") in <code>rows/" + htmlEscape(s.name) + ".csv</code>; " + n(static_cast<std::int64_t>(shown))
                + " shown here.</p>\n";
            if (shown == 0)
                continue;
            // Every set holds one status (its title says which): no column for it. The time that
            // matters next is the lease for processing rows, the next attempt for retryable ones.
            const std::string& status = s.rows.front().status;
            const bool lease = status == "processing", retry = status == "retryable_failed";
            std::vector<std::string> head
                = { "<span style=\"white-space: nowrap\">key</span>", "attempts", "created (UTC)", "updated (UTC)" };
            if (lease || retry)
                head.push_back(lease ? "lease until (UTC)" : "next attempt (UTC)");
            for (const char* c : { "class", "last error" })
                head.push_back(c);
            h += "<table width=\"100%\">\n" + row(head, true);
            for (std::size_t i = 0; i < shown; ++i) {
                const auto& r = s.rows[i];
                std::vector<std::string> cells = { htmlEscape(r.key), n(r.attempts) + "/" + n(r.maxAttempts),
                    nowrap(shortTime(r.createdAt)), nowrap(shortTime(r.updatedAt)) };
                if (lease || retry)
                    cells.push_back(nowrap(optTime(lease ? r.leaseUntil : r.nextAttemptAt)));
                cells.push_back(nowrap(opt(r.errorClass)));
                cells.push_back(clip(r.errorMessage));
                h += row(cells);
            }
            h += "</table>\n";
        }
        return h;
    }

    std::string conflictsSection(const SnapshotData& d)
    {
        std::string h;
        const auto& f = d.figures;
        h += "<h2>Recent digest conflicts: " + n(f.digestConflicts) + " in " + n(d.windowMinutes) + " min</h2>\n";
        if (d.conflicts.rows.empty())
            h += "<p class=\"note\">None counted.</p>\n";
        else {
            h += "<p class=\"note\">A conflict changes no row: the per-minute counters are its only trace. All "
                + n(static_cast<std::int64_t>(d.conflicts.rows.size()))
                + " rows in <code>recent_conflicts.csv</code>.</p>\n";
            h += "<table>\n" + row({ "minute (UTC)", "tenant", "operation", "conflicts" }, true);
            for (std::size_t i = 0; i < std::min<std::size_t>(d.conflicts.rows.size(), 50); ++i) {
                const auto& c = d.conflicts.rows[i];
                h += row({ shortTime(c.bucket).substr(0, 16), htmlEscape(c.tenant), htmlEscape(c.operation), n(c.n) });
            }
            h += "</table>\n";
        }
        return h;
    }

    std::string auditSection(const SnapshotData& d)
    {
        std::string h;
        h += "<h2>Audit: " + n(d.audit.total) + " entr" + (d.audit.total == 1 ? "y" : "ies") + "</h2>\n<p>Chain head: "
            + (d.audit.headHash ? "entry " + n(*d.audit.headId) + ", <code>" + htmlEscape(*d.audit.headHash) + "</code>"
                                : std::string("(empty)"))
            + "</p>\n";
        if (!d.audit.tail.empty()) {
            h += "<p class=\"note\">Newest " + n(static_cast<std::int64_t>(d.audit.tail.size())) + " (bound "
                + n(d.audit.limit) + ") in <code>audit_tail.csv</code>.</p>\n<table>\n"
                + row({ "id", "at (UTC)", "action", "key", "reason", "by" }, true);
            for (std::size_t i = 0; i < std::min<std::size_t>(d.audit.tail.size(), 50); ++i) {
                const auto& e = d.audit.tail[i];
                h += row({ n(e.id), nowrap(shortTime(e.at)), htmlEscape(e.action), htmlEscape(e.key), clip(e.reason),
                    htmlEscape(e.dbRole) + " (" + htmlEscape(e.osUser) + "@" + htmlEscape(e.clientHost) + ")" });
            }
            h += "</table>\n";
        }
        return h;
    }

    std::string reportFoot(const SnapshotData& d)
    {
        std::string h;
        h += "<p class=\"note\">Check this bundle with <code>idemctl snapshot verify DIR [--pubkey FILE]</code>: every "
             "file is listed with its SHA-256 in MANIFEST"
            + std::string(d.signingKeyFingerprint
                    ? ", signed with Ed25519 key " + htmlEscape(d.signingKeyFingerprint->substr(0, 16)) + "&hellip;"
                    : "")
            + ".</p>\n</body></html>\n";
        return h;
    }
} // namespace

std::string snapshotReportHtml(const SnapshotData& d, const std::vector<ReportImage>& images, int reportRowLimit)
{
    return reportHead(d) + figuresSection(d) + chartsSection(images) + latencySection(d) + eventsSection(d)
        + pausesSection(d) + jobsSection(d) + reconcileSection(d) + (d.fencing ? fencingReportHtml(*d.fencing) : "")
        + horizonSection(d) + redriveSection(d) + rowSetSections(d, reportRowLimit) + conflictsSection(d)
        + (d.fieldConflicts ? snapshotFieldConflictsHtml(*d.fieldConflicts) : "") // schema v32
        + auditSection(d) + reportFoot(d);
}

} // namespace idem
