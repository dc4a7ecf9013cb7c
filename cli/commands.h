#pragma once

#include <string>
#include <vector>

namespace idem::cli {

// One function per subcommand: arguments after the subcommand's name; returns an ExitCode.
struct Command {
    const char* name;
    const char* summary;
    int (*run)(const std::vector<std::string>& args);
};

int runMigrate(const std::vector<std::string>& args);
int runDigest(const std::vector<std::string>& args);
int runVerify(const std::vector<std::string>& args);
int runStats(const std::vector<std::string>& args);
int runExporter(const std::vector<std::string>& args);
int runDemo(const std::vector<std::string>& args);
int runSnapshot(const std::vector<std::string>& args);
int runTasks(const std::vector<std::string>& args);
int runRequeue(const std::vector<std::string>& args);
int runRelease(const std::vector<std::string>& args);
int runFail(const std::vector<std::string>& args);
int runAudit(const std::vector<std::string>& args);
int runPurge(const std::vector<std::string>& args);
int runRetention(const std::vector<std::string>& args);
int runStorage(const std::vector<std::string>& args);
int runPause(const std::vector<std::string>& args);
int runResume(const std::vector<std::string>& args);
int runPauses(const std::vector<std::string>& args);
int runPauseForecast(const std::vector<std::string>& args); // idemctl pause forecast (cmd_ramp.cpp)
int runResumeRamp(const std::vector<std::string>& args); // idemctl resume --ramp (cmd_ramp.cpp)
int runLatency(const std::vector<std::string>& args);
int runAnnotate(const std::vector<std::string>& args);
int runEvents(const std::vector<std::string>& args);
int runJob(const std::vector<std::string>& args);
int runApprovals(const std::vector<std::string>& args);
int runRights(const std::vector<std::string>& args);
int runReconcile(const std::vector<std::string>& args);
int runFencing(const std::vector<std::string>& args);
int runScenarioWorker(const std::vector<std::string>& args);

} // namespace idem::cli
