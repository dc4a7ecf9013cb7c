#pragma once

#include <pqxx/connection>

// CPU clocks the benchmarks read beside wall time: the calling thread's, and a local
// PostgreSQL backend's from /proc.
namespace idem::bench {

// The calling thread's CPU time in microseconds.
double threadCpuUs();

// A backend's user + system CPU time in microseconds, from /proc/PID/stat (the server must run
// on this machine); -1 when unknown.
double backendCpuUs(int pid);

// The connection's backend pid when the server runs on this machine (loopback or a local
// socket, and the process is a postgres one); 0 for a server elsewhere.
int backendPid(pqxx::connection& conn);

} // namespace idem::bench
