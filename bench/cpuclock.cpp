#include "bench/cpuclock.h"

#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include <pqxx/pqxx>

namespace idem::bench {

double threadCpuUs()
{
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

double backendCpuUs(int pid)
{
    if (pid <= 0)
        return -1;
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    if (!std::getline(in, stat))
        return -1;
    const auto close = stat.rfind(')'); // the command name may hold spaces
    if (close == std::string::npos)
        return -1;
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    unsigned long long utime = 0;
    for (int i = 3; fields >> field; ++i) { // field 3 is the state
        if (i == 14)
            utime = std::stoull(field);
        if (i == 15)
            return static_cast<double>(utime + std::stoull(field)) * 1e6 / static_cast<double>(sysconf(_SC_CLK_TCK));
    }
    return -1;
}

int backendPid(pqxx::connection& conn)
{
    pqxx::read_transaction t(conn);
    const auto r = t.exec("SELECT pg_backend_pid(), inet_server_addr() IS NULL"
                          " OR host(inet_server_addr()) IN ('127.0.0.1', '::1')");
    const int pid = r[0][0].as<int>();
    if (!r[0][1].as<bool>())
        return 0;
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    return std::getline(comm, name) && name.starts_with("postgres") ? pid : 0;
}

} // namespace idem::bench
