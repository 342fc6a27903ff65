#include "runs/scalar_table.h"

#include <QDir>
#include <QFileInfo>
#include <QHash>
#include <QPair>

#include <algorithm>
#include <cmath>
#include <limits>

#include "runs/csv_table.h"
#include "runs/run_files.h"
#include "protocol/wire.h"

namespace ringmaster::runs {
namespace {

QString unreadable(const char* file, int line)
{
    return QStringLiteral("%1 line %2 unreadable (not a number)").arg(QString::fromLatin1(file)).arg(line);
}

// Collects records in file order. With a cap, each series (name) keeps at most `cap` points: past it every
// other kept point goes and the series then keeps one in 2, 4, ... of what arrives, its last point always kept.
class Collector
{
public:
    Collector(ScalarTable* out, int cap) : m_out(out), m_cap(cap) {}

    void add(ScalarRecord record)
    {
        if (m_cap <= 0) {
            m_out->records.append(std::move(record));
            return;
        }
        Series& series = m_series[record.name];
        const qint64 sequence = m_sequence++;
        series.last = {sequence, record};
        if (series.seen++ % series.stride != 0) return;
        series.kept.append({sequence, std::move(record)});
        if (series.kept.size() > m_cap) {
            QList<QPair<qint64, ScalarRecord>> halved;
            for (qsizetype i = 0; i < series.kept.size(); i += 2) halved.append(series.kept[i]);
            series.kept = std::move(halved);
            series.stride *= 2;
        }
    }

    // The kept records, in file order; says so when a series was thinned.
    void finish(const QString& run)
    {
        if (m_cap <= 0) return;
        QList<QPair<qint64, ScalarRecord>> all;
        qint64 widest = 1;
        for (auto it = m_series.begin(); it != m_series.end(); ++it) {
            Series& series = it.value();
            if (series.kept.isEmpty() || series.kept.last().first != series.last.first) series.kept.append(series.last);
            all += series.kept;
            widest = std::max(widest, series.stride);
        }
        std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (auto& entry : all) m_out->records.append(std::move(entry.second));
        if (widest > 1) {
            m_out->problems << QStringLiteral("%1 has more than %2 points in a series: drawn from every %3th point of the longest "
                                              "(exports read every point)").arg(run).arg(m_cap).arg(widest);
        }
    }

private:
    struct Series
    {
        qint64 seen = 0;
        qint64 stride = 1;
        QList<QPair<qint64, ScalarRecord>> kept;
        QPair<qint64, ScalarRecord> last;
    };
    ScalarTable* m_out;
    int m_cap;
    qint64 m_sequence = 0;
    QHash<QString, Series> m_series;
};

void fromScalarsCsv(CsvStream& table, const QString& run, Collector* out, QStringList* problems)
{
    const int stepColumn = table.column(protocol::kKeyStep);
    const int wallColumn = table.column(protocol::kKeyWallTime);
    const int nameColumn = table.column(column::kName);
    const int valueColumn = table.column(column::kValue);
    if (stepColumn < 0 || nameColumn < 0 || valueColumn < 0) {
        *problems << QStringLiteral("scalars.csv has no step, name or value column");
        return;
    }
    QList<QByteArray> row;
    int line = 0;
    while (table.next(&row, &line)) {
        const auto step = parseCsvInteger(row[stepColumn]);
        const auto value = parseCsvNumber(row[valueColumn]);
        const auto wallTime = wallColumn >= 0 ? parseCsvNumber(row[wallColumn]) : std::nullopt;
        if (!step || !value || (wallColumn >= 0 && !wallTime)) {
            *problems << unreadable(kScalarsFile, line);
            continue;
        }
        out->add({run, *step, wallTime, QString::fromUtf8(row[nameColumn]), *value});
    }
}

// The older record: one metrics.csv row per step and one eval.csv row per evaluation (a run of the trainer
// alone, under torchrun or srun, has no scalars.csv).
void fromMetricsAndEval(CsvStream& metrics, CsvStream& eval, const QString& run, Collector* out, QStringList* problems)
{
    QHash<qint64, double> wallTimeOfStep;   // only for the steps an evaluation names (eval.csv is read first)
    const int evalStepColumn = eval.column(protocol::kKeyStep);
    if (eval.exists() && !eval.header().isEmpty() && evalStepColumn < 0) *problems << QStringLiteral("eval.csv has no step column");
    struct EvalRow { qint64 step; QList<QPair<const char*, double>> values; };
    QList<EvalRow> evals;
    QList<QByteArray> row;
    int line = 0;
    while (evalStepColumn >= 0 && eval.next(&row, &line)) {
        const auto step = parseCsvInteger(row[evalStepColumn]);
        if (!step) {
            *problems << unreadable(kEvalFile, line);
            continue;
        }
        EvalRow parsed{*step, {}};
        for (const char* name : {protocol::kKeyValLoss, protocol::kKeyValAccuracy}) {
            const int column = eval.column(name);
            if (column < 0) continue;
            const auto value = parseCsvNumber(row[column]);
            if (!value) {
                *problems << unreadable(kEvalFile, line);
                continue;
            }
            parsed.values.append({name, *value});
        }
        wallTimeOfStep.insert(*step, std::numeric_limits<double>::quiet_NaN());
        evals.append(parsed);
    }
    const int stepColumn = metrics.column(protocol::kKeyStep);
    const int wallColumn = metrics.column(protocol::kKeyWallTime);
    const char* const metricNames[] = {protocol::kKeyLoss, protocol::kKeyLr, protocol::kKeySamplesPerSec, protocol::kKeyEpoch};
    if (metrics.exists() && !metrics.header().isEmpty() && stepColumn < 0) *problems << QStringLiteral("metrics.csv has no step column");
    // Evaluations come after the training rows of their step, in step order (metrics.csv is in step order).
    qsizetype nextEval = 0;
    const auto evalsUpTo = [&](qint64 step) {
        for (; nextEval < evals.size() && evals[nextEval].step <= step; ++nextEval) {
            const auto wall = wallTimeOfStep.value(evals[nextEval].step);
            const std::optional<double> wallTime = std::isnan(wall) ? std::nullopt : std::optional<double>(wall);
            for (const auto& [name, value] : evals[nextEval].values) out->add({run, evals[nextEval].step, wallTime, QString::fromLatin1(name), value});
        }
    };
    while (stepColumn >= 0 && metrics.next(&row, &line)) {
        const auto step = parseCsvInteger(row[stepColumn]);
        const auto wallTime = wallColumn >= 0 ? parseCsvNumber(row[wallColumn]) : std::nullopt;
        if (!step || (wallColumn >= 0 && !wallTime)) {
            *problems << unreadable(kMetricsFile, line);
            continue;
        }
        evalsUpTo(*step - 1);
        if (wallTime && wallTimeOfStep.contains(*step)) wallTimeOfStep.insert(*step, *wallTime);
        for (const char* name : metricNames) {
            const int column = metrics.column(name);
            if (column < 0) continue;
            const auto value = parseCsvNumber(row[column]);
            if (!value) {
                *problems << unreadable(kMetricsFile, line);
                continue;
            }
            out->add({run, *step, wallTime, QString::fromLatin1(name), *value});
        }
    }
    evalsUpTo(std::numeric_limits<qint64>::max());
}

} // namespace

ScalarTable readRunScalars(const QString& dirPath, int maxPointsPerSeries)
{
    requireRunDirectory(dirPath);
    const QDir dir(dirPath);
    const QString run = QFileInfo(QDir::cleanPath(dirPath)).fileName();
    ScalarTable out;
    Collector collector(&out, maxPointsPerSeries);
    CsvStream scalars(dir.filePath(QString::fromLatin1(kScalarsFile)), QString::fromLatin1(kScalarsFile));
    if (scalars.exists() && !scalars.header().isEmpty()) {
        QStringList problems;
        fromScalarsCsv(scalars, run, &collector, &problems);
        collector.finish(run);
        out.problems = scalars.problems() + problems + out.problems;
        return out;
    }
    CsvStream metrics(dir.filePath(QString::fromLatin1(kMetricsFile)), QString::fromLatin1(kMetricsFile));
    CsvStream eval(dir.filePath(QString::fromLatin1(kEvalFile)), QString::fromLatin1(kEvalFile));
    QStringList problems;
    fromMetricsAndEval(metrics, eval, run, &collector, &problems);
    collector.finish(run);
    out.problems = scalars.problems() + metrics.problems() + eval.problems() + problems + out.problems;
    return out;
}

} // namespace ringmaster::runs
