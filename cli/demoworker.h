#pragma once

#include <string>

#include <pqxx/connection>

namespace idem::cli::demo {

struct Shared;

// The body of one worker thread: its own connections and TaskStores, sending requests at the
// shared rate until shared.stop is set. Never throws; failures are counted and reported.
void runWorker(Shared& shared, int index);

// Registers the demo's operations as re-drivable (tenant '*', schema v25) and sets
// shared.redrivable; a refusal is reported and the demo runs without re-execution.
void registerOperations(pqxx::connection& conn, Shared& shared);

// The body of one re-driver thread for `operation` (every tenant): it takes the re-executions an
// operator asked for (idemctl requeue --re-execute, the console) and runs each with its stored
// request and the same key, paying downstream and writing the effect as a worker would, until
// shared.stop. Polls every half second (no LISTEN, so a pooler in front does not matter).
void runRedriver(Shared& shared, const std::string& operation, int slot);

} // namespace idem::cli::demo
