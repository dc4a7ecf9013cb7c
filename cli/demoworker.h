#pragma once

namespace idem::cli::demo {

struct Shared;

// The body of one worker thread: its own connections and TaskStores, sending requests at the
// shared rate until shared.stop is set. Never throws; failures are counted and reported.
void runWorker(Shared& shared, int index);

} // namespace idem::cli::demo
