#include "tests/support/testdb.h"

#include <atomic>
#include <cstdlib>
#include <pqxx/pqxx>
#include <stdexcept>
#include <unistd.h>

#include "core/connection.h"

namespace idem::test {

std::string adminDsn()
{
    const char* env = std::getenv("IDEM_TEST_DSN");
    return env ? env : "";
}

QString databaseProblem()
{
    const std::string dsn = adminDsn();
    const QString howTo = QStringLiteral(
        "Run the whole suite with scripts/test.sh, which starts a throwaway cluster; or start one by hand "
        "(scripts/idem-db start) and export IDEM_TEST_DSN=\"$(IDEM_DB_NAME=postgres scripts/idem-db dsn)\".");
    if (dsn.empty())
        return QStringLiteral("IDEM_TEST_DSN is not set: these tests need a real PostgreSQL. ") + howTo;
    try {
        auto c = idem::connect(dsn);
        pqxx::read_transaction t(*c);
        t.exec("SELECT 1");
    } catch (const std::exception& e) {
        return QStringLiteral("The test database in IDEM_TEST_DSN is not reachable: %1. ").arg(QString::fromUtf8(e.what()))
            + howTo;
    }
    return {};
}

std::string dsnWith(const std::string& base, std::initializer_list<std::pair<std::string, std::string>> overrides)
{
    auto options = idem::parseConninfo(base);
    for (const auto& [key, value] : overrides) {
        if (value.empty())
            options.erase(key);
        else
            options[key] = value;
    }
    return idem::formatConninfo(options);
}

ScratchDatabase::ScratchDatabase(const std::string& tag)
{
    static std::atomic<int> counter { 0 };
    m_name = "idem_t_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    m_dsn = dsnWith(adminDsn(), { { "dbname", m_name } });
    auto admin = idem::connect(adminDsn());
    pqxx::nontransaction n(*admin);
    n.exec("DROP DATABASE IF EXISTS \"" + m_name + "\" WITH (FORCE)");
    n.exec("CREATE DATABASE \"" + m_name + "\"");
}

ScratchDatabase::~ScratchDatabase()
{
    try {
        auto admin = idem::connect(adminDsn());
        pqxx::nontransaction n(*admin);
        n.exec("DROP DATABASE IF EXISTS \"" + m_name + "\" WITH (FORCE)");
    } catch (const std::exception&) {
        // A leftover scratch database is harmless: the test cluster is thrown away after the run.
    }
}

std::unique_ptr<pqxx::connection> ScratchDatabase::connect() const
{
    return idem::connect(m_dsn);
}

void createLoginRole(const std::string& name, const std::string& password, const std::string& grantedRole)
{
    auto admin = idem::connect(adminDsn());
    pqxx::work w(*admin);
    // Role names are fixed by the tests; the password is a value and goes through format(%L)
    // on the server because CREATE ROLE takes no bind parameters.
    w.exec_params("SELECT 1 FROM pg_roles WHERE rolname = $1", name).empty()
        ? void(w.exec("CREATE ROLE \"" + name + "\" LOGIN"))
        : void();
    const auto sql = w.exec_params("SELECT format('ALTER ROLE %I LOGIN PASSWORD %L', $1::text, $2::text)", name, password);
    w.exec(sql[0][0].as<std::string>());
    if (!grantedRole.empty())
        w.exec("GRANT \"" + grantedRole + "\" TO \"" + name + "\"");
    w.commit();
}

std::string loginDsn(const std::string& base, const std::string& login, const std::string& password)
{
    return dsnWith(base, { { "user", login }, { "password", password }, { "passfile", "" } });
}

} // namespace idem::test
