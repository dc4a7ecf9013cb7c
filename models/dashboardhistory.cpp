#include "models/dashboardhistory.h"

#include <algorithm>

namespace idem::console {

DashboardHistory::DashboardHistory()
    : m_live(liveCapacity)
{
}

void DashboardHistory::addLive(const LiveSample& sample) { m_live.push(sample); }

void DashboardHistory::mergeBuckets(const std::vector<idem::CounterBucket>& buckets)
{
    for (const auto& b : buckets) {
        // Ticks bring the newest minutes, so the place is almost always at the end.
        auto it = std::lower_bound(m_minutes.begin(), m_minutes.end(), b.minuteEpoch,
            [](const idem::CounterBucket& have, qint64 minute) { return have.minuteEpoch < minute; });
        if (it != m_minutes.end() && it->minuteEpoch == b.minuteEpoch)
            *it = b;
        else
            m_minutes.insert(it, b);
    }
    if (m_minutes.empty())
        return;
    const qint64 oldest = m_minutes.back().minuteEpoch - (minuteCapacity - 1) * 60;
    while (m_minutes.front().minuteEpoch < oldest)
        m_minutes.pop_front();
}

void DashboardHistory::clear()
{
    m_live.clear();
    m_minutes.clear();
}

qint64 DashboardHistory::bytes() const
{
    return static_cast<qint64>(m_live.capacity() * sizeof(LiveSample) + m_minutes.size() * sizeof(idem::CounterBucket));
}

namespace {
    // First index whose time is >= ms (the ring is in time order).
    int firstAtOrAfter(const Ring<LiveSample>& samples, qint64 ms)
    {
        int lo = 0;
        int hi = samples.size();
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (samples.at(mid).ms < ms)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo;
    }
} // namespace

QList<QPointF> downsampleMinMax(
    const Ring<LiveSample>& samples, qint64 LiveSample::*value, qint64 fromMs, qint64 toMs, int pixels)
{
    QList<QPointF> out;
    if (pixels < 1 || toMs <= fromMs)
        return out;
    const int begin = firstAtOrAfter(samples, fromMs);
    const double msPerPixel = static_cast<double>(toMs - fromMs) / pixels;
    out.reserve(2 * pixels);
    int i = begin;
    while (i < samples.size() && samples.at(i).ms <= toMs) {
        const int column = static_cast<int>((samples.at(i).ms - fromMs) / msPerPixel);
        const qint64 columnEnd = fromMs + static_cast<qint64>((column + 1) * msPerPixel);
        int minAt = i;
        int maxAt = i;
        int j = i;
        for (; j < samples.size() && samples.at(j).ms < columnEnd && samples.at(j).ms <= toMs; ++j) {
            if (samples.at(j).*value < samples.at(minAt).*value)
                minAt = j;
            if (samples.at(j).*value > samples.at(maxAt).*value)
                maxAt = j;
        }
        if (j == i)
            ++j; // a sample exactly on the window's end
        const int first = std::min(minAt, maxAt);
        const int second = std::max(minAt, maxAt);
        out.append(QPointF(samples.at(first).ms, samples.at(first).*value));
        if (second != first)
            out.append(QPointF(samples.at(second).ms, samples.at(second).*value));
        i = j;
    }
    // The newest sample is what the tiles show: the line must end on it, not on a column extreme.
    if (!out.isEmpty() && begin < samples.size()) {
        const int last = firstAtOrAfter(samples, toMs + 1) - 1;
        if (last >= begin && out.constLast().x() != samples.at(last).ms)
            out.append(QPointF(samples.at(last).ms, samples.at(last).*value));
    }
    return out;
}

QList<QPointF> allPoints(const Ring<LiveSample>& samples, qint64 LiveSample::*value, qint64 fromMs, qint64 toMs)
{
    QList<QPointF> out;
    for (int i = firstAtOrAfter(samples, fromMs); i < samples.size() && samples.at(i).ms <= toMs; ++i)
        out.append(QPointF(samples.at(i).ms, samples.at(i).*value));
    return out;
}

} // namespace idem::console
