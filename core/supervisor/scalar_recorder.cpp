#include "supervisor/scalar_recorder.h"

#include <QDateTime>
#include <QDir>

#include <cmath>

#include "protocol/run_layout.h"
#include "protocol/wire.h"

namespace ringmaster::supervisor {
namespace {

constexpr int kRoundTripDigits = 17;   // every double reads back bit-exactly
constexpr int kWallTimeDecimals = 3;   // milliseconds

void addFinite(ScalarBatch* batch, const char* name, double value)
{
    if (std::isfinite(value)) batch->values.append({QString::fromLatin1(name), value});
}

} // namespace

ScalarBatch scalarsOf(const StepMetric& metric)
{
    ScalarBatch batch;
    batch.step = metric.step;
    addFinite(&batch, protocol::kKeyLoss, metric.loss);
    addFinite(&batch, protocol::kKeyLr, metric.lr);
    addFinite(&batch, protocol::kKeySamplesPerSec, metric.samplesPerSec);
    addFinite(&batch, protocol::kKeyEpoch, static_cast<double>(metric.epoch));
    return batch;
}

ScalarBatch scalarsOf(const EvalMetric& metric)
{
    ScalarBatch batch;
    batch.step = metric.step;
    addFinite(&batch, protocol::kKeyValLoss, metric.valLoss);
    addFinite(&batch, protocol::kKeyValAccuracy, metric.valAccuracy);
    return batch;
}

bool ScalarRecorder::open(const QString& runDir)
{
    return m_file.openCsv(QDir(runDir).filePath(QString::fromLatin1(protocol::kScalarsFile)),
                          QByteArray::fromStdString(protocol::csvHeader(protocol::kScalarsColumns)), &m_error);
}

bool ScalarRecorder::append(const ScalarBatch& scalars)
{
    return append(scalars, static_cast<double>(QDateTime::currentMSecsSinceEpoch()) / 1000.0);
}

bool ScalarRecorder::append(const ScalarBatch& scalars, double wallTime)
{
    if (!m_file.isOpen()) {
        m_error = QStringLiteral("%1 is not open").arg(QLatin1String(protocol::kScalarsFile));
        return false;
    }
    if (scalars.values.isEmpty()) return true;
    const QString prefix = QString::number(scalars.step) + QLatin1Char(',') + QString::number(wallTime, 'f', kWallTimeDecimals) + QLatin1Char(',');
    QString rows;
    for (const auto& scalar : scalars.values) {
        rows += prefix + QString::fromStdString(protocol::csvField(scalar.name.toStdString())) + QLatin1Char(',') + QString::number(scalar.value, 'g', kRoundTripDigits) + QLatin1Char('\n');
    }
    const QByteArray bytes = rows.toUtf8();
    if (const QString failed = m_file.append(bytes); !failed.isEmpty()) {
        m_error = failed;
        return false;
    }
    m_rowsWritten += scalars.values.size();
    return true;
}

} // namespace ringmaster::supervisor
