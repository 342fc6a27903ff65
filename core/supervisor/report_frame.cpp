#include "supervisor/report_frame.h"

#include <QJsonValue>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <limits>

#include "protocol/run_layout.h"
#include "protocol/wire.h"

namespace ringmaster::supervisor {
namespace {

constexpr double kTwoTo63 = 9223372036854775808.0;   // 2^63: the first double past qint64's range
constexpr double kLargestExactInteger = 9007199254740992.0; // 2^53

double numberOr(const QJsonObject& frame, const char* key, double fallback)
{
    const auto value = frame.value(QLatin1String(key));
    return value.isDouble() ? value.toDouble() : fallback;
}

// A whole number in qint64's range, else `fallback` (JSON numbers are doubles: finite, but of any size).
qint64 integerOr(const QJsonObject& frame, const char* key, qint64 fallback)
{
    const auto value = frame.value(QLatin1String(key));
    if (!value.isDouble()) return fallback;
    const double number = value.toDouble();
    if (!std::isfinite(number) || std::floor(number) != number || number < -kTwoTo63 || number >= kTwoTo63) return fallback;
    return static_cast<qint64>(number);
}

QString textOf(const QJsonObject& frame, const char* key)
{
    return frame.value(QLatin1String(key)).toString();
}

// A hello's node name, kept only when it is plain: it becomes an argument of srun (--nodelist=NAME) when a hung
// rank's stacks are taken, and the hello's MAC does not cover it.
QString nodeNameOf(const QJsonObject& frame)
{
    const QString name = textOf(frame, protocol::kKeyHost);
    return isPlainNodeName(name) ? name : QString();
}

// A heartbeat's "usage": only the process metrics' names, only sane values.
QList<QPair<QString, double>> usageOf(const QJsonObject& frame)
{
    constexpr double kMostThreads = 4096.0;
    const QJsonObject object = frame.value(QLatin1String(protocol::kKeyUsage)).toObject();
    QList<QPair<QString, double>> usage;
    for (const char* name : protocol::system_metric::kProcessMetrics) {
        const QJsonValue value = object.value(QLatin1String(name));
        if (!value.isDouble() || !std::isfinite(value.toDouble()) || value.toDouble() < 0.0) continue;
        usage.append({QString::fromLatin1(name), value.toDouble()});
    }
    const auto threads = std::find_if(usage.begin(), usage.end(), [](const auto& entry) {
        return entry.first == QLatin1String(protocol::system_metric::kThreads);
    });
    const double cpuLimit = 100.0 * (threads != usage.end() ? std::max(1.0, threads->second) : kMostThreads);
    usage.erase(std::remove_if(usage.begin(), usage.end(), [&](const auto& entry) {
                    return entry.first == QLatin1String(protocol::system_metric::kCpuPercent) && entry.second > cpuLimit;
                }),
                usage.end());
    return usage;
}

// A heartbeat's "timing" object; invalid (steps 0) unless every value is there, finite and not negative.
StepTiming timingOf(const QJsonObject& frame)
{
    using namespace protocol;
    const QJsonObject object = frame.value(QLatin1String(kKeyTiming)).toObject();
    StepTiming timing;
    timing.steps = integerOr(object, kKeyTimingSteps, 0);
    double* parts[] = {&timing.dataMs, &timing.computeMs, &timing.syncMs, &timing.optimizerMs};
    const char* keys[] = {kKeyDataMs, kKeyComputeMs, kKeySyncMs, kKeyOptimizerMs};
    for (std::size_t i = 0; i < std::size(parts); ++i) {
        *parts[i] = numberOr(object, keys[i], -1.0);
        if (!std::isfinite(*parts[i]) || *parts[i] < 0) return {};
    }
    return timing.steps > 0 ? timing : StepTiming{};
}

// A step is a non-negative integer that a double holds exactly.
bool validStep(const QJsonValue& value, qint64* step)
{
    if (!value.isDouble()) return false;
    const double number = value.toDouble();
    if (!std::isfinite(number) || number < 0 || number > kLargestExactInteger || std::floor(number) != number) return false;
    *step = static_cast<qint64>(number);
    return true;
}

// A scalar's name: 1 to kMaxScalarNameLength characters, none of them a control character (it becomes
// a CSV field and a chart label).
bool validScalarName(const QString& name)
{
    if (name.isEmpty() || name.size() > protocol::kMaxScalarNameLength) return false;
    for (const QChar c : name) {
        if (c.category() == QChar::Other_Control) return false;
    }
    return true;
}

ReportFrame::Kind kindOf(const QString& type)
{
    using namespace protocol;
    using Kind = ReportFrame::Kind;
    if (type == QLatin1String(kTypeHello)) return Kind::Hello;
    if (type == QLatin1String(kTypeStep)) return Kind::Step;
    if (type == QLatin1String(kTypeEval)) return Kind::Eval;
    if (type == QLatin1String(kTypeCheckpoint)) return Kind::Checkpoint;
    if (type == QLatin1String(kTypeStatus)) return Kind::Status;
    if (type == QLatin1String(kTypeHeartbeat)) return Kind::Heartbeat;
    if (type == QLatin1String(kTypeScalars)) return Kind::Scalars;
    return Kind::Other;
}

void readScalars(const QJsonObject& frame, ReportFrame* out)
{
    using namespace protocol;
    const QJsonValue valuesField = frame.value(QLatin1String(kKeyValues));
    const QJsonObject values = valuesField.toObject();
    if (!valuesField.isObject()) {
        out->droppedScalars = 1;
        out->scalarsProblem = QStringLiteral("its '%1' is not an object of names and numbers").arg(QLatin1String(kKeyValues));
        return;
    }
    if (!validStep(frame.value(QLatin1String(kKeyStep)), &out->scalars.step)) {
        out->droppedScalars = std::max<qint64>(1, values.size());
        out->scalarsProblem = QStringLiteral("its step is not a non-negative integer");
        return;
    }
    for (auto it = values.begin(); it != values.end(); ++it) {
        const double value = it.value().isDouble() ? it.value().toDouble() : std::nan("");
        QString problem;
        if (out->scalars.values.size() >= kMaxScalarsPerFrame) {
            problem = QStringLiteral("more than %1 values in one frame").arg(kMaxScalarsPerFrame);
        } else if (!validScalarName(it.key())) {
            problem = QStringLiteral("a name that is empty, longer than %1 characters or has control characters").arg(kMaxScalarNameLength);
        } else if (!std::isfinite(value)) {
            problem = QStringLiteral("'%1' is not a finite number").arg(it.key());
        } else {
            out->scalars.values.append({it.key(), value});
            continue;
        }
        if (out->scalarsProblem.isEmpty()) out->scalarsProblem = problem;
        ++out->droppedScalars;
    }
}

} // namespace

bool isPlainNodeName(const QString& name)
{
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$"));
    return plain.match(name).hasMatch();
}

ReportFrame readReportFrame(const QJsonObject& frame)
{
    using namespace protocol;
    using Kind = ReportFrame::Kind;
    ReportFrame out;
    out.version = integerOr(frame, kKeyVersion, -1);
    out.type = textOf(frame, kKeyType);
    out.kind = kindOf(out.type);
    switch (out.kind) {
    case Kind::Hello: {
        const qint64 rank = integerOr(frame, kKeyRank, -1);
        out.rank = rank >= 0 && rank <= std::numeric_limits<int>::max() ? static_cast<int>(rank) : -1;
        out.pid = integerOr(frame, kKeyPid, 0);
        out.token = textOf(frame, kKeyToken);
        out.host = nodeNameOf(frame);
        break;
    }
    case Kind::Step:
        out.step.step = integerOr(frame, kKeyStep, 0);
        out.step.epoch = integerOr(frame, kKeyEpoch, 0);
        out.step.loss = numberOr(frame, kKeyLoss, std::nan(""));
        out.step.lr = numberOr(frame, kKeyLr, 0);
        out.step.samplesPerSec = numberOr(frame, kKeySamplesPerSec, 0);
        out.step.wallTime = numberOr(frame, kKeyWallTime, 0);
        break;
    case Kind::Eval:
        out.eval.epoch = integerOr(frame, kKeyEpoch, 0);
        out.eval.step = integerOr(frame, kKeyStep, 0);
        out.eval.valLoss = numberOr(frame, kKeyValLoss, std::nan(""));
        out.eval.valAccuracy = numberOr(frame, kKeyValAccuracy, std::nan(""));
        break;
    case Kind::Checkpoint:
        out.checkpointStep = integerOr(frame, kKeyStep, 0);
        out.checkpointPath = textOf(frame, kKeyPath);
        break;
    case Kind::Status:
        out.status = textOf(frame, kKeyStatus);
        break;
    case Kind::Heartbeat:
        out.heartbeatStep = integerOr(frame, kKeyStep, 0);
        out.phase = textOf(frame, kKeyPhase);
        out.timing = timingOf(frame);
        out.usage = usageOf(frame);
        break;
    case Kind::Scalars:
        readScalars(frame, &out);
        break;
    case Kind::Other:
        break;
    }
    return out;
}

} // namespace ringmaster::supervisor
