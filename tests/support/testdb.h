#pragma once

#include <memory>
#include <string>

#include <QString>

#include <pqxx/connection>

namespace idem::test {

// The cluster scripts/test.sh starts. Empty when the variable is unset.
std::string adminDsn();

// Why there is no usable test database, or empty when there is one. Tests call
// IDEM_REQUIRE_DATABASE() in initTestCase so that a missing database fails the run loudly.
QString databaseProblem();

// The admin DSN with some options replaced (dbname, user, password, sslmode, ...).
std::string dsnWith(const std::string& base, std::initializer_list<std::pair<std::string, std::string>> overrides);

// The DSN of `base` as a login role with its password, ignoring any passfile (so the password
// given is the one tried), for tests that act as reader, operator, worker or a plain role.
std::string loginDsn(const std::string& base, const std::string& login, const std::string& password);

// A fresh database for one test, dropped (forcibly) when this goes out of scope.
//
// Empty: as CREATE DATABASE makes it, for tests of migrate itself, of a missing, old or refused
// schema, or of a schema other than idem.
// Migrated: schema idem at the latest version, as `migrate(conn, { SchemaName(), false })` leaves
// an empty database (no role script: a test that wants the grants still calls migrate with
// roles, which then applies only that). It is a copy of a template database that the first test
// of the run migrated (idem_t_template_<hash of the bundled migrations and functions>, built
// under an advisory lock, rebuilt when the schema changes or it is older than 30 minutes); its
// latency roll-up starts at the copy, as a migration's would. Calling migrate on it finds it current.
class ScratchDatabase {
public:
    enum class Contents { Empty, Migrated };
    explicit ScratchDatabase(const std::string& tag, Contents contents = Contents::Empty);
    ~ScratchDatabase();
    ScratchDatabase(const ScratchDatabase&) = delete;
    ScratchDatabase& operator=(const ScratchDatabase&) = delete;

    const std::string& name() const { return m_name; }
    // Superuser DSN for this database.
    const std::string& dsn() const { return m_dsn; }
    std::unique_ptr<pqxx::connection> connect() const;

private:
    std::string m_name;
    std::string m_dsn;
};

// ScratchDatabase("tag", migrated): a copy of the migrated template (see above).
inline constexpr ScratchDatabase::Contents migrated = ScratchDatabase::Contents::Migrated;

// Creates (or resets) a login role with a password and the given Idem role granted; the
// role is cluster-wide, so names should be unique per test program.
void createLoginRole(const std::string& name, const std::string& password, const std::string& grantedRole);

} // namespace idem::test

#define IDEM_REQUIRE_DATABASE()                                                                                        \
    do {                                                                                                               \
        const QString problem_ = idem::test::databaseProblem();                                                        \
        if (!problem_.isEmpty())                                                                                       \
            QFAIL(qPrintable(problem_));                                                                               \
    } while (false)
