#include "supervisor/system_tensorboard.h"

#include <QDir>

#include <cmath>

#include "protocol/run_layout.h"
#include "protocol/tensorboard_records.h"

namespace ringmaster::supervisor {

namespace tb = protocol::tensorboard;

bool SystemTensorBoard::open(double wallTime)
{
    const QString folder = QDir(m_runDir).filePath(QString::fromLatin1(protocol::kSystemTensorBoardFolder));
    if (!QDir().mkpath(folder)) {
        m_error = QStringLiteral("cannot create %1").arg(folder);
        return false;
    }
    if (!m_file.open(QString::fromStdString(tb::nextEventFilePath(folder.toStdString())), &m_error)) return false;
    const std::string version = tb::frameRecord(tb::encodeFileVersionEvent(wallTime));
    if (const QString failed = m_file.append(QByteArray(version.data(), static_cast<qsizetype>(version.size()))); !failed.isEmpty()) {
        m_error = failed;
        m_file.close();
        return false;
    }
    return true;
}

bool SystemTensorBoard::append(const QList<SystemSample>& samples)
{
    if (samples.isEmpty()) return true;
    if (!m_file.isOpen() && !open(samples.first().wallTime)) return false;
    std::string records;
    for (const SystemSample& sample : samples) {
        const std::string tag = protocol::systemSeriesName(sample.rank, sample.name.toStdString()); // as exports name it
        records += tb::frameRecord(tb::encodeScalarEvent(sample.wallTime, static_cast<std::int64_t>(std::floor(sample.wallTime)), tag,
                                                         static_cast<float>(sample.value)));
    }
    if (const QString failed = m_file.append(QByteArray(records.data(), static_cast<qsizetype>(records.size()))); !failed.isEmpty()) {
        m_error = failed;
        return false;
    }
    return true;
}

} // namespace ringmaster::supervisor
