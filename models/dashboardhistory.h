#pragma once

#include <QList>
#include <QPointF>

#include <deque>
#include <vector>

#include "operations/dashboardquery.h"

namespace idem::console {

// What a tick saw of the live rows (not in idem_counters, so kept only since the console started).
struct LiveSample {
    qint64 ms = 0; // server clock, ms since the epoch
    qint64 processing = 0;
    qint64 expired = 0;
    qint64 tickMs = 0; // what the tick itself cost (the console's own load)
};

// A fixed-capacity ring: pushing onto a full ring drops the oldest entry, so memory is set at
// construction and does not grow with uptime.
template <typename T> class Ring {
public:
    explicit Ring(int capacity)
        : m_items(static_cast<std::size_t>(capacity))
    {
    }
    void push(const T& item)
    {
        m_items[(m_start + m_size) % m_items.size()] = item;
        if (m_size < m_items.size())
            ++m_size;
        else
            m_start = (m_start + 1) % m_items.size();
    }
    int size() const { return static_cast<int>(m_size); }
    int capacity() const { return static_cast<int>(m_items.size()); }
    bool empty() const { return m_size == 0; }
    // 0 is the oldest.
    const T& at(int i) const { return m_items[(m_start + static_cast<std::size_t>(i)) % m_items.size()]; }
    const T& back() const { return at(size() - 1); }
    void clear() { m_start = m_size = 0; }

private:
    std::vector<T> m_items;
    std::size_t m_start = 0;
    std::size_t m_size = 0;
};

// The dashboard's bounded history: one live sample per tick (24 h at one tick a second) and one
// counter bucket per minute (24 h), merged as ticks bring the newest minutes again.
class DashboardHistory {
public:
    static constexpr int liveCapacity = 24 * 60 * 60;
    static constexpr int minuteCapacity = 24 * 60 + 1;

    DashboardHistory();

    void addLive(const LiveSample& sample);
    // Buckets from a tick (oldest first): each replaces the stored one of its minute, as the
    // current minute keeps counting until it closes; minutes older than a day are dropped.
    void mergeBuckets(const std::vector<idem::CounterBucket>& buckets);
    void clear();

    const Ring<LiveSample>& live() const { return m_live; }
    const std::deque<idem::CounterBucket>& minutes() const { return m_minutes; }
    // Approximate bytes held, for the benchmark and the status line.
    qint64 bytes() const;

private:
    Ring<LiveSample> m_live;
    std::deque<idem::CounterBucket> m_minutes;
};

// Reduces samples in [fromMs, toMs] to at most two points per pixel column (its minimum and its
// maximum, in time order), so a 24 h window at one sample a second draws as many points as the
// chart is wide and keeps every spike. `value` picks the sampled figure.
QList<QPointF> downsampleMinMax(
    const Ring<LiveSample>& samples, qint64 LiveSample::*value, qint64 fromMs, qint64 toMs, int pixels);

// Every sample in the window, one point each (what the chart would get without downsampling).
QList<QPointF> allPoints(const Ring<LiveSample>& samples, qint64 LiveSample::*value, qint64 fromMs, qint64 toMs);

} // namespace idem::console
