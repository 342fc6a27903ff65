#include "supervisor/system_recorder.h"

#include <QDir>

#include "protocol/run_layout.h"

namespace ringmaster::supervisor {
namespace {

constexpr int kWallTimeDecimals = 3;  // milliseconds
constexpr int kValueDigits = 17;      // every double reads back exactly (as scalars.csv), and so its float32

} // namespace

bool SystemRecorder::open(const QString& runDir)
{
    return m_file.openCsv(QDir(runDir).filePath(QString::fromLatin1(protocol::kSystemFile)), QByteArray::fromStdString(protocol::csvHeader(protocol::kSystemColumns)), &m_error);
}

bool SystemRecorder::append(const QList<SystemSample>& samples)
{
    if (!m_file.isOpen()) {
        m_error = QStringLiteral("%1 is not open").arg(QLatin1String(protocol::kSystemFile));
        return false;
    }
    QString rows;
    for (const SystemSample& sample : samples) {
        rows += QString::number(sample.wallTime, 'f', kWallTimeDecimals) + QLatin1Char(',') + QString::number(sample.rank) +
                QLatin1Char(',') + sample.name + QLatin1Char(',') + QString::number(sample.value, 'g', kValueDigits) + QLatin1Char('\n');
    }
    if (const QString failed = m_file.append(rows.toUtf8()); !failed.isEmpty()) {
        m_error = failed;
        return false;
    }
    return true;
}

} // namespace ringmaster::supervisor
