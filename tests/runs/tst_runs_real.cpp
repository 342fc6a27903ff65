// ringmaster-runs on run directories made by real short runs: two runs of ringmaster-launch with the built-in
// trainer (2 CPU ranks, an mlp on a small CSV, 3 epochs of 6 steps, an evaluation after each epoch), one at
// lr 0.05 and one at lr 0.02. Then every command's output is checked against the runs' own files: list --json
// (status, steps, final loss = the last metrics.csv loss, best accuracy = eval.csv's best), export (each
// metrics.csv and eval.csv value, value for value, as exactly the same double, and nothing else), bundle
// (every member byte-identical to its original; environment.json from summary.json and commands.json),
// plot (PNG and PDF headers and sizes) and the TensorBoard event file (every record's checksums, and each
// value at every step exactly the float32 of its CSV value).
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <string>

#include "protocol/tensorboard_records.h"
#include "runs/csv_table.h"
#include "run_fixture.h"

using namespace ringmaster::runs;
using namespace ringmaster::runs::test;
namespace tb = ringmaster::protocol::tensorboard;

namespace {

constexpr int kProcessTimeoutMs = 180000;
constexpr int kRows = 120;              // 96 for training (6 steps of 2 x 8 per epoch), 24 held out
constexpr int kFeatures = 4;
constexpr int kClasses = 3;
constexpr int kEpochs = 3;
constexpr int kStepsPerEpoch = 6;
const QStringList kTrainingNames{QStringLiteral("loss"), QStringLiteral("lr"), QStringLiteral("samples_per_sec"), QStringLiteral("epoch")};
const QStringList kEvalNames{QStringLiteral("val_loss"), QStringLiteral("val_accuracy")};

struct Result
{
    int exitCode = -1;
    QString out;
    QString err;
};

Result run(const QString& program, const QStringList& arguments, const QString& workingDirectory = QString())
{
    QProcess process;
    if (!workingDirectory.isEmpty()) process.setWorkingDirectory(workingDirectory);
    process.start(program, arguments);
    Result result;
    if (!process.waitForFinished(kProcessTimeoutMs) || process.exitStatus() != QProcess::NormalExit) {
        process.kill();
        process.waitForFinished();
        result.err = QStringLiteral("%1 did not finish").arg(program);
        return result;
    }
    result.exitCode = process.exitCode();
    result.out = QString::fromUtf8(process.readAllStandardOutput());
    result.err = QString::fromUtf8(process.readAllStandardError());
    return result;
}

Result runsCli(const QStringList& arguments) { return run(qEnvironmentVariable("RINGMASTER_RUNS"), arguments); }

// Three classes, each a cloud around its own centre, so the mlp learns something in 18 steps.
QByteArray datasetCsv()
{
    QByteArray csv = "f0,f1,f2,f3,label\n";
    for (int i = 0; i < kRows; ++i) {
        const int label = i % kClasses;
        for (int f = 0; f < kFeatures; ++f) {
            const double value = (f == label ? 2.0 : 0.0) + 0.7 * std::sin(i * 1.7 + f * 2.3);
            csv += QByteArray::number(value, 'g', 6) + ',';
        }
        csv += QByteArray::number(label) + '\n';
    }
    return csv;
}

CsvTable table(const QString& runDir, const char* file)
{
    return readCsvTable(runDir + QLatin1Char('/') + QLatin1String(file), QLatin1String(file));
}

double number(const CsvTable& csv, int row, const char* column)
{
    const int index = csv.column(column);
    const auto value = index >= 0 ? parseCsvNumber(csv.rows.at(row).at(index)) : std::nullopt;
    if (!value) qFatal("%s: row %d has no number in %s", csv.header.join(',').constData(), row, column);
    return *value;
}

qint64 stepOf(const CsvTable& csv, int row)
{
    return static_cast<qint64>(number(csv, row, "step"));
}

// Every regular file under DIR, relative to it, sorted.
QStringList filesUnder(const QString& dir)
{
    QStringList files;
    QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) files << QDir(dir).relativeFilePath(it.next());
    files.sort();
    return files;
}

quint32 bigEndian32(const QByteArray& bytes, int at)
{
    quint32 value = 0;
    for (int i = 0; i < 4; ++i) value = (value << 8) | static_cast<quint8>(bytes.at(at + i));
    return value;
}

bool sameBits(float a, float b)
{
    return std::memcmp(&a, &b, sizeof a) == 0;
}

} // namespace

class TestRunsOnRealRuns : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_work;
    QString m_root;                 // the folder of runs
    QMap<QString, QString> m_runs;  // name -> run directory

private Q_SLOTS:
    void initTestCase()
    {
        for (const char* variable : {"RINGMASTER_LAUNCH", "RINGMASTER_RUNS", "RINGMASTER_TRAINER"}) {
            QVERIFY2(QFileInfo(qEnvironmentVariable(variable)).isExecutable(), variable);
        }
        const QString data = m_work.filePath(QStringLiteral("classes.csv"));
        writeFile(data, datasetCsv());
        m_root = m_work.filePath(QStringLiteral("runs"));
        for (const QString& lr : {QStringLiteral("0.05"), QStringLiteral("0.02")}) {
            const QString name = QStringLiteral("mlp-lr") + lr;
            const QString dir = m_root + QLatin1Char('/') + name;
            const Result launch = run(qEnvironmentVariable("RINGMASTER_LAUNCH"),
                                      {QStringLiteral("--trainer"), qEnvironmentVariable("RINGMASTER_TRAINER"), QStringLiteral("--out"), dir,
                                       QStringLiteral("--nproc"), QStringLiteral("2"), QStringLiteral("--quiet"),
                                       QStringLiteral("--model"), QStringLiteral("mlp"), QStringLiteral("--data"), data,
                                       QStringLiteral("--val-split"), QStringLiteral("0.2"), QStringLiteral("--batch-size"), QStringLiteral("8"),
                                       QStringLiteral("--epochs"), QString::number(kEpochs), QStringLiteral("--lr"), lr,
                                       QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("--data-cache"), QStringLiteral("off")});
            QVERIFY2(launch.exitCode == 0, qPrintable(launch.out + launch.err));
            m_runs.insert(name, dir);
        }
    }

    void listJsonDescribesEachRun()
    {
        const Result r = runsCli({QStringLiteral("list"), QStringLiteral("--root"), m_root, QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonArray listed = QJsonDocument::fromJson(r.out.toUtf8()).array();
        QCOMPARE(listed.size(), m_runs.size());
        QList<double> finalLosses;
        for (const QJsonValue& value : listed) {
            const QJsonObject run = value.toObject();
            const QString name = run.value(QStringLiteral("name")).toString();
            QVERIFY2(m_runs.contains(name), qPrintable(name));
            const CsvTable metrics = table(m_runs[name], "metrics.csv");
            const CsvTable eval = table(m_runs[name], "eval.csv");
            QCOMPARE(metrics.rows.size(), kEpochs * kStepsPerEpoch);
            QVERIFY(metrics.problems.isEmpty() && eval.problems.isEmpty());
            QCOMPARE(run.value(QStringLiteral("status")).toString(), QStringLiteral("completed"));
            QCOMPARE(run.value(QStringLiteral("kind")).toString(), QStringLiteral("trainer"));
            QCOMPARE(run.value(QStringLiteral("model")).toString(), QStringLiteral("mlp"));
            QCOMPARE(run.value(QStringLiteral("world_size")).toInt(), 2);
            QCOMPARE(run.value(QStringLiteral("steps")).toInteger(), stepOf(metrics, metrics.rows.size() - 1));
            // Exactly the last loss metrics.csv holds, and the best accuracy eval.csv holds (not merely close).
            const double finalLoss = run.value(QStringLiteral("final_loss")).toDouble();
            QVERIFY2(finalLoss == number(metrics, metrics.rows.size() - 1, "loss"), qPrintable(QString::number(finalLoss, 'g', 17)));
            double best = -1.0;
            for (int row = 0; row < eval.rows.size(); ++row) best = std::max(best, number(eval, row, "val_accuracy"));
            QVERIFY(eval.rows.size() >= kEpochs);
            QVERIFY(run.value(QStringLiteral("best_val_accuracy")).toDouble() == best);
            QCOMPARE(run.value(QStringLiteral("problems")).toArray().size(), 0);
            finalLosses << finalLoss;
        }
        QVERIFY(finalLosses[0] != finalLosses[1]);   // two different runs, not one listed twice
    }

    void exportHoldsEveryCsvValueExactly()
    {
        const QString out = m_work.filePath(QStringLiteral("all.csv"));
        const Result r = runsCli({QStringLiteral("export"), m_runs.first(), m_runs.last(), QStringLiteral("--out"), out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.err, QString());
        const CsvTable exported = readCsvTable(out, QStringLiteral("all.csv"));
        QCOMPARE(exported.header, (QList<QByteArray>{"run", "step", "wall_time", "name", "value"}));
        QVERIFY(exported.problems.isEmpty());
        // (run, step, name) -> the exported value, read back from its text.
        QMap<QString, double> values;
        for (const auto& row : exported.rows) {
            const QString key = QString::fromUtf8(row[0] + ' ' + row[1] + ' ' + row[3]);
            QVERIFY2(!values.contains(key), qPrintable(key));
            values.insert(key, *parseCsvNumber(row[4]));
        }
        int expected = 0;
        for (auto run = m_runs.cbegin(); run != m_runs.cend(); ++run) {
            auto check = [&](const CsvTable& csv, const QStringList& names) {
                for (int row = 0; row < csv.rows.size(); ++row) {
                    for (const QString& name : names) {
                        const QString key = QStringLiteral("%1 %2 %3").arg(run.key()).arg(stepOf(csv, row)).arg(name);
                        const double original = number(csv, row, name.toLatin1().constData());
                        QVERIFY2(values.contains(key), qPrintable(key));
                        QVERIFY2(values.value(key) == original, qPrintable(QStringLiteral("%1: exported %2, CSV %3").arg(key)
                                     .arg(values.value(key), 0, 'g', 17).arg(original, 0, 'g', 17)));
                        ++expected;
                    }
                }
            };
            check(table(run.value(), "metrics.csv"), kTrainingNames);
            check(table(run.value(), "eval.csv"), kEvalNames);
            // system.csv: each (rank, name) is the series system/rank<R>/<name>, its samples numbered 0, 1, ...
            const CsvTable system = table(run.value(), "system.csv");
            QVERIFY2(!system.rows.isEmpty(), "the launcher samples every rank from its start");
            QMap<QString, int> samples;
            for (const auto& row : system.rows) {
                const QString series = QStringLiteral("system/rank%1/%2").arg(QString::fromUtf8(row[1]), QString::fromUtf8(row[2]));
                const QString key = QStringLiteral("%1 %2 %3").arg(run.key()).arg(samples[series]++).arg(series);
                QVERIFY2(values.contains(key), qPrintable(key));
                QCOMPARE(values.value(key), *parseCsvNumber(row[3]));
                ++expected;
            }
            if (QTest::currentTestFailed()) return;
        }
        QCOMPARE(exported.rows.size(), expected);   // every value of the CSVs, and nothing else
    }

    void bundleMembersAreTheOriginalsByteForByte()
    {
        const QString name = m_runs.firstKey();
        const QString dir = m_runs.first();
        const QString archive = m_work.filePath(QStringLiteral("bundle.tar.gz"));
        const Result r = runsCli({QStringLiteral("bundle"), dir, QStringLiteral("--out"), archive, QStringLiteral("--with-checkpoints"),
                                  QStringLiteral("--with-model")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QString into = m_work.filePath(QStringLiteral("unpacked"));
        QVERIFY(QDir().mkpath(into));
        const Result tar = run(QStringLiteral("tar"), {QStringLiteral("-xzf"), archive, QStringLiteral("-C"), into});
        QVERIFY2(tar.exitCode == 0, qPrintable(tar.err));

        // Every file of the run but the TensorBoard folder, ringmaster-runs' own index and the launcher's lock (a
        // runtime file, not a result), and environment.json.
        QStringList expected;
        for (const QString& file : filesUnder(dir)) {
            if (!file.startsWith(QStringLiteral("tb/")) && file != QLatin1String(".ringmaster-index.json") &&
                file != QLatin1String("supervisor.lock")) {
                expected << file;
            }
        }
        QVERIFY2(QFileInfo::exists(dir + QStringLiteral("/supervisor.lock")), "the launcher's lock is in the run (left out of bundles)");
        for (const char* required : {"job.json", "summary.json", "metrics.csv", "eval.csv", "scalars.csv", "system.csv", "commands.json",
                                     "logs/rank-0.log", "logs/rank-1.log", "logs/launcher.log", "model.pt"}) {
            QVERIFY2(expected.contains(QLatin1String(required)), required);
        }
        QVERIFY(expected.filter(QStringLiteral("checkpoints/")).size() >= 1);
        const QString top = into + QLatin1Char('/') + name;
        QStringList unpacked = filesUnder(top);
        QVERIFY(unpacked.removeOne(QStringLiteral("environment.json")));
        QCOMPARE(unpacked, expected);
        for (const QString& file : expected) {
            QVERIFY2(readFile(top + QLatin1Char('/') + file) == readFile(dir + QLatin1Char('/') + file), qPrintable(file));
        }

        const QJsonObject environment = QJsonDocument::fromJson(readFile(top + QStringLiteral("/environment.json"))).object();
        const QJsonObject summary = QJsonDocument::fromJson(readFile(dir + QStringLiteral("/summary.json"))).object();
        const QJsonObject commands = QJsonDocument::fromJson(readFile(dir + QStringLiteral("/commands.json"))).object();
        const QJsonObject recorded = environment.value(QStringLiteral("run")).toObject();
        QVERIFY(!summary.value(QStringLiteral("libtorch_version")).toString().isEmpty());
        for (const char* key : {"libtorch_version", "cuda_version", "nccl_version", "device", "backend", "world_size"}) {
            QVERIFY2(summary.contains(QLatin1String(key)), key);   // the trainer records each (null without CUDA)
            QCOMPARE(recorded.value(QLatin1String(key)), summary.value(QLatin1String(key)));
        }
        // A CPU run: the launcher saw no GPU, so no names and no driver.
        QVERIFY(recorded.value(QStringLiteral("gpu_names")).isNull());
        QVERIFY(recorded.value(QStringLiteral("driver_version")).isNull());
        QCOMPARE(environment.value(QStringLiteral("rank_commands")).toArray(), commands.value(QStringLiteral("ranks")).toArray());
        QCOMPARE(environment.value(QStringLiteral("rank_commands")).toArray().size(), 2);
    }

    void plotWritesPngAndPdfOfTheRequestedSize()
    {
        const QString png = m_work.filePath(QStringLiteral("compare.png"));
        Result r = runsCli({QStringLiteral("plot"), m_runs.first(), m_runs.last(), QStringLiteral("--out"), png, QStringLiteral("--size"),
                            QStringLiteral("640,480")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.out, QStringLiteral("wrote %1 (loss of 2 runs, 640x480)\n").arg(png));
        QByteArray bytes = readFile(png);
        QVERIFY(bytes.startsWith("\x89PNG\r\n\x1a\n"));
        QCOMPARE(bytes.mid(12, 4), QByteArray("IHDR"));
        QCOMPARE(bigEndian32(bytes, 16), 640u);
        QCOMPARE(bigEndian32(bytes, 20), 480u);
        QVERIFY2(bytes.size() > 4096, qPrintable(QString::number(bytes.size())));   // two curves, axes and a legend, not a blank page
        QVERIFY(bytes.endsWith(QByteArray("IEND\xae\x42\x60\x82", 8)));

        const QString pdf = m_work.filePath(QStringLiteral("compare.pdf"));
        r = runsCli({QStringLiteral("plot"), m_runs.first(), m_runs.last(), QStringLiteral("--out"), pdf, QStringLiteral("--size"),
                     QStringLiteral("640,480"), QStringLiteral("--metric"), QStringLiteral("val_accuracy")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        bytes = readFile(pdf);
        QVERIFY(bytes.startsWith("%PDF-1."));
        QVERIFY(bytes.trimmed().endsWith("%%EOF"));
        const auto box = bytes.indexOf("/MediaBox");
        QVERIFY(box > 0);
        // 640x480 pixels at 96 per inch: 480x360 points.
        QCOMPARE(bytes.mid(box, bytes.indexOf(']', box) + 1 - box), QByteArray("/MediaBox [0 0 480.000000 360.000000]"));
        QVERIFY2(bytes.size() > 2048, qPrintable(QString::number(bytes.size())));
    }

    void tensorBoardFileHoldsTheCsvValuesAsFloat32()
    {
        for (auto run = m_runs.cbegin(); run != m_runs.cend(); ++run) {
            const QStringList files = QDir(run.value() + QStringLiteral("/tb")).entryList(QDir::Files);
            QCOMPARE(files.size(), 1);   // rank 0's only
            QVERIFY(files.first().startsWith(QLatin1String(tb::kEventFilePrefix)));
            const QByteArray bytes = readFile(run.value() + QStringLiteral("/tb/") + files.first());
            QMap<QString, float> values;   // "step tag" -> value
            QString firstVersion;
            int events = 0;
            const tb::ScanResult scan = tb::scanEvents(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())),
                                                       [&](const tb::Event& event) {
                if (events++ == 0) firstVersion = QString::fromStdString(event.fileVersion);
                for (const tb::ScalarValue& scalar : event.scalars) {
                    values.insert(QStringLiteral("%1 %2").arg(event.step).arg(QString::fromStdString(scalar.tag)), static_cast<float>(scalar.value));
                }
            });
            // Every record whole, both checksums of each verified by the reader.
            QCOMPARE(scan.consumed, static_cast<std::size_t>(bytes.size()));
            QVERIFY(!scan.framingLost);
            QCOMPARE(scan.badDataRecords, std::size_t{0});
            QCOMPARE(scan.undecodableRecords, std::size_t{0});
            QCOMPARE(firstVersion, QStringLiteral("brain.Event:2"));

            auto check = [&](const CsvTable& csv, const QStringList& names) {
                for (int row = 0; row < csv.rows.size(); ++row) {
                    for (const QString& name : names) {
                        const QString key = QStringLiteral("%1 %2").arg(stepOf(csv, row)).arg(name);
                        QVERIFY2(values.contains(key), qPrintable(run.key() + QStringLiteral(": no event ") + key));
                        const float expected = static_cast<float>(number(csv, row, name.toLatin1().constData()));
                        const float event = values.take(key);
                        QVERIFY2(sameBits(event, expected), qPrintable(QStringLiteral("%1 %2: event %3, CSV as float32 %4")
                                     .arg(run.key(), key).arg(event, 0, 'g', 9).arg(expected, 0, 'g', 9)));
                    }
                }
            };
            check(table(run.value(), "metrics.csv"), {QStringLiteral("loss"), QStringLiteral("lr"), QStringLiteral("samples_per_sec")});
            check(table(run.value(), "eval.csv"), kEvalNames);
            if (QTest::currentTestFailed()) return;
            QVERIFY2(values.isEmpty(), qPrintable(values.keys().join(QStringLiteral(", "))));
        }
    }
};

QTEST_GUILESS_MAIN(TestRunsOnRealRuns)
#include "tst_runs_real.moc"
