#include "tests/support/testdb.h"

#include <QCryptographicHash>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <pqxx/pqxx>
#include <stdexcept>
#include <unistd.h>

#include "core/connection.h"
#include "schema/migrate.h"

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

namespace {

    // Taken shared to copy the template and exclusively to (re)build it, on the admin database.
    constexpr long long templateLockKey = 0x6964656d5f746d70; // "idem_tmp"
    constexpr auto templateMaxAge = std::chrono::minutes(30);

    // The template's name: a digest of everything migrate applies, so a changed migration or
    // function file makes a new one.
    std::string templateName()
    {
        QCryptographicHash hash(QCryptographicHash::Sha256);
        for (const auto& m : idem::bundledMigrations()) {
            hash.addData(QByteArray::fromStdString(m.name + ' ' + m.checksum + '\n'));
        }
        for (const auto& f : idem::bundledFunctions()) {
            hash.addData(QByteArray::fromStdString(f.name + ' ' + f.checksum + '\n'));
        }
        return "idem_t_template_" + hash.result().toHex().left(16).toStdString();
    }

    long long nowSeconds()
    {
        return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    }

    // Whether the template exists, is complete (its comment, the time it was finished, is
    // written last) and young enough.
    bool templateUsable(pqxx::nontransaction& n, const std::string& name)
    {
        const auto r = n.exec_params(
            "SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database WHERE datname = $1", name);
        if (r.empty())
            return false;
        const auto comment = r[0][0].as<std::string>();
        if (comment.rfind("built ", 0) != 0)
            return false;
        const long long builtAt = std::stoll(comment.substr(6));
        return nowSeconds() - builtAt < std::chrono::seconds(templateMaxAge).count();
    }

    // Holding the exclusive lock: drops every template (an older schema's, a stale or a half-built
    // one) and migrates a new one. Nobody may connect to it afterwards: a session on a template
    // makes CREATE DATABASE from it fail.
    void buildTemplate(pqxx::nontransaction& n, const std::string& name)
    {
        const auto old = n.exec("SELECT datname FROM pg_database WHERE datname LIKE 'idem\\_t\\_template\\_%'");
        for (const auto& row : old) {
            n.exec("DROP DATABASE IF EXISTS \"" + row[0].as<std::string>() + "\" WITH (FORCE)");
        }
        n.exec("CREATE DATABASE \"" + name + "\"");
        {
            auto c = idem::connect(dsnWith(adminDsn(), { { "dbname", name } }));
            idem::migrate(*c, { idem::SchemaName(), false });
        }
        n.exec("ALTER DATABASE \"" + name + "\" WITH ALLOW_CONNECTIONS false");
        n.exec("COMMENT ON DATABASE \"" + name + "\" IS 'built " + std::to_string(nowSeconds()) + "'");
    }

    // Creates `target` as a copy of the migrated template, building that first when needed.
    void createMigrated(pqxx::nontransaction& n, const std::string& target)
    {
        const std::string name = templateName();
        const std::string create = "CREATE DATABASE \"" + target + "\" TEMPLATE \"" + name + "\"";
        n.exec_params("SELECT pg_advisory_lock_shared($1)", templateLockKey);
        bool made = false;
        try {
            if (templateUsable(n, name)) {
                n.exec(create);
                made = true;
            }
        } catch (...) {
            n.exec_params("SELECT pg_advisory_unlock_shared($1)", templateLockKey);
            throw;
        }
        n.exec_params("SELECT pg_advisory_unlock_shared($1)", templateLockKey);
        if (made)
            return;
        n.exec_params("SELECT pg_advisory_lock($1)", templateLockKey);
        try {
            if (!templateUsable(n, name))
                buildTemplate(n, name);
            n.exec(create);
        } catch (...) {
            n.exec_params("SELECT pg_advisory_unlock($1)", templateLockKey);
            throw;
        }
        n.exec_params("SELECT pg_advisory_unlock($1)", templateLockKey);
    }

} // namespace

ScratchDatabase::ScratchDatabase(const std::string& tag, Contents contents)
{
    static std::atomic<int> counter { 0 };
    m_name = "idem_t_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    m_dsn = dsnWith(adminDsn(), { { "dbname", m_name } });
    auto admin = idem::connect(adminDsn());
    pqxx::nontransaction n(*admin);
    n.exec("DROP DATABASE IF EXISTS \"" + m_name + "\" WITH (FORCE)");
    if (contents == Contents::Empty) {
        n.exec("CREATE DATABASE \"" + m_name + "\"");
        return;
    }
    createMigrated(n, m_name);
    // The roll-up starts where a migration run now would start it.
    auto c = connect();
    pqxx::nontransaction(*c).exec(
        "UPDATE idem.idem_latency_state SET folded_to = date_trunc('minute', now()), folded_at = NULL");
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
