// Getting results out of a run: every scalar as a long table whose values read back exactly (CSV and
// JSON, from scalars.csv or, for older runs, metrics.csv and eval.csv), and a tar.gz bundle whose members
// are byte-identical to the run's files, with environment.json, checkpoints and model.pt only when asked.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <limits>

#include "runs/environment_info.h"
#include "runs/run_bundle.h"
#include "runs/run_files.h"
#include "run_fixture.h"
#include "runs/scalar_export.h"
#include "runs/scalar_table.h"

using namespace ringmaster::runs;
using namespace ringmaster::runs::test;

namespace {

const QList<double> kAwkwardValues{0.1, 1.0 / 3.0, 1e-300, 123456789.123456789, 5e-324, -2.5e+300,
                                   std::numeric_limits<double>::max(), 0.30000000000000004, 42.0};

// Parses the export CSV back (no quoted fields in these tests but the name column).
QList<QList<QByteArray>> csvRows(const QByteArray& bytes)
{
    QList<QList<QByteArray>> rows;
    for (const QByteArray& line : bytes.split('\n')) {
        if (!line.isEmpty()) rows.append(line.split(','));
    }
    return rows;
}

QString extract(const QString& archive, const QString& into)
{
    QProcess tar;
    tar.start(QStringLiteral("tar"), {QStringLiteral("-xzf"), archive, QStringLiteral("-C"), into});
    if (!tar.waitForFinished(60000) || tar.exitCode() != 0) return QString::fromUtf8(tar.readAllStandardError()) + QStringLiteral(" (tar failed)");
    return {};
}

} // namespace

class TestRunExport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void csvValuesRoundTripExactly()
    {
        QTemporaryDir root;
        const QString dir = makeScriptRun(root.path(), QStringLiteral("20261130-144028-train"));
        QByteArray scalars = "step,wall_time,name,value\n";
        for (int i = 0; i < kAwkwardValues.size(); ++i) {
            // As the supervisor's ScalarRecorder writes them: 17 significant digits.
            scalars += QByteArray::number(i) + ",1796049634.125,x," + QByteArray::number(kAwkwardValues[i], 'g', 17) + '\n';
        }
        writeFile(dir + QStringLiteral("/scalars.csv"), scalars);
        const ScalarTable table = readRunScalars(dir);
        QCOMPARE(table.problems, QStringList());
        const QString out = root.filePath(QStringLiteral("out.csv"));
        writeScalars(table.records, out, ExportFormat::Csv);

        const auto rows = csvRows(readFile(out));
        QCOMPARE(rows.size(), kAwkwardValues.size() + 1);
        QCOMPARE(rows[0].join(','), QByteArray(kExportCsvHeader));
        for (int i = 0; i < kAwkwardValues.size(); ++i) {
            const auto& row = rows[i + 1];
            QCOMPARE(row[0], QByteArray("20261130-144028-train"));
            QCOMPARE(row[1].toLongLong(), qint64(i));
            QCOMPARE(row[2].toDouble(), 1796049634.125);
            QCOMPARE(row[3], QByteArray("x"));
            bool ok = false;
            const double value = row[4].toDouble(&ok);
            QVERIFY(ok);
            QVERIFY2(value == kAwkwardValues[i], row[4].constData());   // bit for bit, not fuzzy
        }
        QCOMPARE(rows[1][4], QByteArray("0.1"));   // the shortest text that round-trips, not 0.10000000000000001
    }

    void jsonHasTheSameRecords()
    {
        QTemporaryDir root;
        const QString dir = makeScriptRun(root.path(), QStringLiteral("20261130-144028-train"));
        const QString out = root.filePath(QStringLiteral("out.json"));
        writeScalars(readRunScalars(dir).records, out, ExportFormat::Json);
        QJsonParseError error{};
        const QJsonArray array = QJsonDocument::fromJson(readFile(out), &error).array();
        QCOMPARE(error.error, QJsonParseError::NoError);
        QCOMPARE(array.size(), 7);
        const QJsonObject second = array[1].toObject();
        QCOMPARE(second.keys(), (QStringList{QStringLiteral("name"), QStringLiteral("run"), QStringLiteral("step"),
                                             QStringLiteral("value"), QStringLiteral("wall_time")}));
        QCOMPARE(second.value(QStringLiteral("run")).toString(), QStringLiteral("20261130-144028-train"));
        QCOMPARE(second.value(QStringLiteral("name")).toString(), QStringLiteral("train/a,b"));   // a quoted CSV name
        QCOMPARE(second.value(QStringLiteral("value")).toDouble(), 7.0);
        QCOMPARE(array[4].toObject().value(QStringLiteral("value")).toDouble(), 0.33329999999999999);
        QCOMPARE(array[4].toObject().value(QStringLiteral("wall_time")).toDouble(), 1796049634.222);
        QCOMPARE(array[4].toObject().value(QStringLiteral("step")).toInt(), 2);
    }

    void olderRunsExportMetricsAndEval()
    {
        QTemporaryDir root;
        const QString dir = makeTrainerRun(root.path(), QStringLiteral("20261130-140544-mlp"), 12, false);
        const ScalarTable table = readRunScalars(dir);
        QCOMPARE(table.problems, QStringList());
        QCOMPARE(table.records.size(), 12 * 4 + 3 * 2);
        const QList<QByteArray> metricLines = readFile(dir + QStringLiteral("/metrics.csv")).split('\n');
        int losses = 0;
        for (const ScalarRecord& r : table.records) {
            if (r.name == QLatin1String("loss")) {
                ++losses;
                const QList<QByteArray> fields = metricLines[r.step].split(',');   // line step+1, index step
                QCOMPARE(r.value, fields[2].toDouble());
                QCOMPARE(r.wallTime, std::optional<double>(fields[5].toDouble()));
            }
        }
        QCOMPARE(losses, 12);
        const auto at = [&table](qint64 step, const char* name) {
            for (const ScalarRecord& r : table.records) {
                if (r.step == step && r.name == QLatin1String(name)) return r;
            }
            return ScalarRecord{};
        };
        QCOMPARE(at(8, "val_accuracy").value, 0.9);
        QCOMPARE(at(8, "val_accuracy").wallTime, std::optional<double>(2.0));   // the training step's wall time
        QCOMPARE(at(12, "val_accuracy").value, 0.8);
        QCOMPARE(at(4, "val_loss").value, 0.5);
        QCOMPARE(at(7, "lr").value, 0.01);
        QCOMPARE(at(7, "epoch").value, 0.0);
        QCOMPARE(at(7, "samples_per_sec").value, 1651.81);
    }

    void scalarsCsvIsPreferredAndDamageIsSaid()
    {
        QTemporaryDir root;
        const QString dir = makeTrainerRun(root.path(), QStringLiteral("20261130-140544-mlp"), 12, true);
        QByteArray scalars = readFile(dir + QStringLiteral("/scalars.csv"));
        scalars.chop(5);   // the last row cut short
        writeFile(dir + QStringLiteral("/scalars.csv"), scalars);
        const ScalarTable table = readRunScalars(dir);
        QCOMPARE(table.records.size(), 12 + 3 - 1);
        QCOMPARE(table.records.first().wallTime, std::optional<double>(1796049634.25));
        QCOMPARE(table.problems, QStringList{QStringLiteral("scalars.csv line 16 truncated (no line end)")});
    }

    void unwritableOutputLeavesNothing()
    {
        QTemporaryDir root;
        const QString dir = makeScriptRun(root.path(), QStringLiteral("run"));
        const QString out = root.filePath(QStringLiteral("no-such-folder/out.csv"));
        QVERIFY_THROWS_EXCEPTION(RunsError, writeScalars(readRunScalars(dir).records, out, ExportFormat::Csv));
        QVERIFY_THROWS_EXCEPTION(RunsError, writeRunBundle(dir, root.filePath(QStringLiteral("no-such-folder/b.tar.gz")), {}));
        QVERIFY(!QFileInfo::exists(root.filePath(QStringLiteral("no-such-folder"))));
    }

    void bundleHoldsTheRunByteForByte()
    {
        QTemporaryDir root;
        const QString dir = makeTrainerRun(root.path(), QStringLiteral("20261130-140544-mlp"), 12, true);
        // As the launcher records a GPU launch (rank_command.h hardwareRecord), NVML's names and driver.
        writeFile(dir + QStringLiteral("/commands.json"),
                  R"({"ranks":[{"rank":0,"program":"/usr/bin/ringmaster-trainer","arguments":["--model","mlp"]},)"
                  R"({"rank":1,"program":"/usr/bin/ringmaster-trainer","arguments":["--model","mlp"]}],)"
                  R"("hardware":{"gpus":[{"rank":0,"index":1,"name":"NVIDIA H100 80GB HBM3"},{"rank":1,"index":3,"name":"NVIDIA A100-SXM4-40GB"}],)"
                  R"("driver_version":"550.54.15"}})");
        // As a CUDA build of the trainer records what it was compiled with.
        QJsonObject summary = QJsonDocument::fromJson(readFile(dir + QStringLiteral("/summary.json"))).object();
        summary.insert(QStringLiteral("libtorch_version"), QStringLiteral("2.3.1"));
        summary.insert(QStringLiteral("cuda_version"), QStringLiteral("12.1"));
        summary.insert(QStringLiteral("nccl_version"), QStringLiteral("2.20.5"));
        writeFile(dir + QStringLiteral("/summary.json"), QJsonDocument(summary).toJson());
        writeFile(dir + QStringLiteral("/notes.json"), R"({"title": "baseline", "notes": "notes travel with the run"})");
        // A Slurm run's folder (core/supervisor/slurm): the batch script as submitted, the job id, its log.
        writeFile(dir + QStringLiteral("/slurm/job.sbatch"), "#!/bin/sh\n#SBATCH --nodes=1\nsrun ringmaster-trainer\n");
        writeFile(dir + QStringLiteral("/slurm/job-id"), "57\n");
        writeFile(dir + QStringLiteral("/slurm/batch-57.log"), "srun: job 57 step 0 started\n");
        const QString archive = root.filePath(QStringLiteral("bundle.tar.gz"));
        const BundleResult result = writeRunBundle(dir, archive, {});
        QCOMPARE(result.files, 15);   // 8 files, 3 logs, 3 Slurm files, environment.json

        QTemporaryDir into;
        QCOMPARE(extract(archive, into.path()), QString());
        const QString top = into.filePath(QStringLiteral("20261130-140544-mlp"));
        for (const char* name : {"job.json", "summary.json", "metrics.csv", "eval.csv", "scalars.csv", "classes.json",
                                 "commands.json", "notes.json", "logs/rank-0.log", "logs/rank-1.log", "logs/launcher.log",
                                 "slurm/job.sbatch", "slurm/job-id", "slurm/batch-57.log"}) {
            const QString member = QString::fromLatin1(name);
            QVERIFY2(readFile(top + QLatin1Char('/') + member) == readFile(dir + QLatin1Char('/') + member), name);
        }
        QVERIFY(!QFileInfo::exists(top + QStringLiteral("/checkpoints")));
        QVERIFY(!QFileInfo::exists(top + QStringLiteral("/model.pt")));
        QVERIFY(!QFileInfo::exists(top + QStringLiteral("/.ringmaster-index.json")));

        const QJsonObject environment = QJsonDocument::fromJson(readFile(top + QStringLiteral("/environment.json"))).object();
        QCOMPARE(environment.value(QStringLiteral("ringmaster_version")).toString(), QStringLiteral(RINGMASTER_PROJECT_VERSION));
        QCOMPARE(environment.value(QStringLiteral("qt_version")).toString(), QString::fromLatin1(qVersion()));
        QCOMPARE(environment.value(QStringLiteral("host")).toString(), QSysInfo::machineHostName());
        QVERIFY(!environment.value(QStringLiteral("os")).toString().isEmpty());
        QVERIFY(environment.value(QStringLiteral("kernel")).toString().contains(QSysInfo::kernelVersion()));
        const QJsonObject run = environment.value(QStringLiteral("run")).toObject();
        QCOMPARE(run.value(QStringLiteral("device")).toString(), QStringLiteral("cpu"));
        QCOMPARE(run.value(QStringLiteral("backend")).toString(), QStringLiteral("gloo"));
        QCOMPARE(run.value(QStringLiteral("world_size")).toInt(), 2);
        QCOMPARE(run.value(QStringLiteral("libtorch_version")).toString(), QStringLiteral("2.3.1"));
        QCOMPARE(run.value(QStringLiteral("cuda_version")).toString(), QStringLiteral("12.1"));
        QCOMPARE(run.value(QStringLiteral("nccl_version")).toString(), QStringLiteral("2.20.5"));
        QCOMPARE(run.value(QStringLiteral("driver_version")).toString(), QStringLiteral("550.54.15"));
        QCOMPARE(run.value(QStringLiteral("gpu_names")).toArray(),
                 (QJsonArray{QStringLiteral("NVIDIA H100 80GB HBM3"), QStringLiteral("NVIDIA A100-SXM4-40GB")}));
        const QJsonArray ranks = environment.value(QStringLiteral("rank_commands")).toArray();
        QCOMPARE(ranks.size(), 2);
        QCOMPARE(ranks[1].toObject().value(QStringLiteral("arguments")).toArray().last().toString(), QStringLiteral("mlp"));
    }

    // A CPU run made by a CPU build records no GPU, driver, CUDA or NCCL: null, never guessed.
    void environmentSaysNullForWhatARunDidNotRecord()
    {
        QTemporaryDir root;
        const QString dir = makeTrainerRun(root.path(), QStringLiteral("20261130-140544-mlp"));
        writeFile(dir + QStringLiteral("/commands.json"), R"({"restart":0,"ranks":[{"rank":0,"program":"/usr/bin/ringmaster-trainer","arguments":[]}]})");
        QJsonObject summary = QJsonDocument::fromJson(readFile(dir + QStringLiteral("/summary.json"))).object();
        summary.insert(QStringLiteral("cuda_version"), QJsonValue::Null);   // as the trainer writes it in a CPU build
        writeFile(dir + QStringLiteral("/summary.json"), QJsonDocument(summary).toJson());
        const QJsonObject run = environmentOf(dir).value(QStringLiteral("run")).toObject();
        for (const char* key : {"gpu_names", "driver_version", "cuda_version", "nccl_version", "libtorch_version"}) {
            QVERIFY2(run.contains(QLatin1String(key)) && run.value(QLatin1String(key)).isNull(), key);
        }
        QCOMPARE(run.value(QStringLiteral("device")).toString(), QStringLiteral("cpu"));
    }

    void checkpointsAndModelOnlyWhenAsked()
    {
        QTemporaryDir root;
        const QString dir = makeTrainerRun(root.path(), QStringLiteral("20261130-140544-mlp"));
        const QString archive = root.filePath(QStringLiteral("bundle.tgz"));
        BundleOptions options;
        options.withCheckpoints = true;
        options.withModel = true;
        writeRunBundle(dir, archive, options);
        QTemporaryDir into;
        QCOMPARE(extract(archive, into.path()), QString());
        const QString top = into.filePath(QStringLiteral("20261130-140544-mlp"));
        const QByteArray checkpoint = readFile(top + QStringLiteral("/checkpoints/step-00000010.pt"));
        QCOMPARE(checkpoint.size(), 70000);
        QVERIFY(checkpoint == readFile(dir + QStringLiteral("/checkpoints/step-00000010.pt")));
        QVERIFY(readFile(top + QStringLiteral("/model.pt")) == readFile(dir + QStringLiteral("/model.pt")));
        QVERIFY(!QFileInfo::exists(top + QStringLiteral("/scalars.csv")));   // none in this run: nothing made up

        QVERIFY(QFile::remove(dir + QStringLiteral("/model.pt")));
        const QString second = root.filePath(QStringLiteral("second.tar.gz"));
        QVERIFY_THROWS_EXCEPTION(RunsError, writeRunBundle(dir, second, options));
        QVERIFY(!QFileInfo::exists(second));
    }
};

QTEST_GUILESS_MAIN(TestRunExport)
#include "tst_run_export.moc"
