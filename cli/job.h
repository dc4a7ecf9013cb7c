#pragma once
// idemctl job's parts, shared by its files: cmd_job.cpp (the command, status, cancel, the refused
// list), jobrun.cpp (start and resume: a job run here) and jobtext.cpp (how a job is said).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "operations/jobs.h"
#include "operations/redrive.h"

namespace idem::cli {

class Args;

namespace job {

    extern const char* const help;

    // A job as --json writes it; `outcomes`: its re-executions', read only for a job that re-executes.
    nlohmann::json statusJson(const JobStatus& s, const std::optional<RedriveOutcomes>& outcomes = std::nullopt);
    // A job as the text output says it, one field a line.
    void printStatus(const JobStatus& s, const std::optional<RedriveOutcomes>& outcomes = std::nullopt);
    // The filter in words; the raw JSON when it does not read as one.
    std::string filterWords(const std::string& json);
    std::string safe(const std::string& s, std::size_t n = 200);
    nlohmann::json opt(const std::optional<std::int64_t>& v);
    nlohmann::json optTime(const std::optional<std::int64_t>& us);
    nlohmann::json optText(const std::string& s);

    // The one positional argument, a job id (a usage error otherwise).
    std::int64_t jobId(const Args& args);
    // Says a refusal by the database; what the command exits with.
    int refused(const JobRefused& e, const char* what);

    int start(const std::vector<std::string>& argv);
    int resume(const std::vector<std::string>& argv);

} // namespace job

} // namespace idem::cli
