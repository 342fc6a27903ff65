// core/runs checkpoint_list.h on a real short run of ringmaster-trainer (one rank, synthetic data, a
// checkpoint every 4 steps): each checkpoint's step, file, and epoch and loss from metrics.csv's row.
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "runs/checkpoint_list.h"
#include "runs/csv_table.h"
#include "run_fixture.h"

using namespace ringmaster::runs;

class TestCheckpointList : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_root;
    QString m_run;

private Q_SLOTS:
    void initTestCase()
    {
        const QString trainer = qEnvironmentVariable("RINGMASTER_TRAINER");
        QVERIFY2(!trainer.isEmpty(), "RINGMASTER_TRAINER must name ringmaster-trainer");
        m_run = m_root.path() + QStringLiteral("/run");
        QProcess process;
        process.setProcessChannelMode(QProcess::MergedChannels);
        process.start(trainer, {QStringLiteral("--model"), QStringLiteral("mlp"), QStringLiteral("--data"), QStringLiteral("synthetic"),
                                QStringLiteral("--synthetic-samples"), QStringLiteral("256"), QStringLiteral("--batch-size"), QStringLiteral("16"),
                                QStringLiteral("--epochs"), QStringLiteral("2"), QStringLiteral("--max-steps"), QStringLiteral("22"),
                                QStringLiteral("--checkpoint-every"), QStringLiteral("4"), QStringLiteral("--keep-checkpoints"), QStringLiteral("3"),
                                QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("--data-cache"), QStringLiteral("off"),
                                QStringLiteral("--out"), m_run});
        QVERIFY(process.waitForFinished(180000));
        QVERIFY2(process.exitCode() == 0, process.readAll().constData());
    }

    void listsTheKeptCheckpointsWithTheirMetrics()
    {
        const auto list = listRunCheckpoints(m_run);
        // Every 4 steps and the last (22), the newest 3 kept.
        QList<qint64> steps;
        for (const auto& info : list) steps.append(info.step);
        QCOMPARE(steps, (QList<qint64>{16, 20, 22}));
        const CsvTable metrics = readCsvTable(m_run + QStringLiteral("/metrics.csv"), QStringLiteral("metrics.csv"));
        QCOMPARE(metrics.rows.size(), 22);
        for (const auto& info : list) {
            QCOMPARE(info.path, QFileInfo(m_run + QStringLiteral("/checkpoints/step-%1.pt").arg(info.step, 8, 10, QLatin1Char('0'))).absoluteFilePath());
            QCOMPARE(info.bytes, QFileInfo(info.path).size());
            QVERIFY(info.bytes > 0);
            QVERIFY(info.fileTime.isValid());
            QCOMPARE(info.metricsStep, std::optional<qint64>(info.step));
            const auto& row = metrics.rows.at(static_cast<int>(info.step - 1));   // steps 1..22, in order
            QCOMPARE(row.at(metrics.column("step")).toLongLong(), info.step);
            QVERIFY(info.loss.has_value());
            QCOMPARE(*info.loss, *parseCsvNumber(row.at(metrics.column("loss"))));
            QCOMPARE(*info.epoch, *parseCsvInteger(row.at(metrics.column("epoch"))));
        }
        // 256 samples / 16 per batch: 16 steps an epoch, so step 20 is in the second epoch.
        QCOMPARE(*list.at(0).epoch, qint64(0));
        QCOMPARE(*list.at(1).epoch, qint64(1));
        QVERIFY(*list.at(0).loss != *list.at(2).loss);
        // checkpoints/best.json (--keep-best auto: the lowest val_loss, the last evaluation's here) marks step 22.
        QVERIFY(!list.at(0).best && !list.at(1).best && list.at(2).best);
        QCOMPARE(list.at(2).bestMetric, QStringLiteral("val_loss"));
        const CsvTable eval = readCsvTable(m_run + QStringLiteral("/eval.csv"), QStringLiteral("eval.csv"));
        QCOMPARE(eval.rows.last().at(eval.column("step")).toLongLong(), qint64(22));
        QCOMPARE(list.at(2).bestValue, *parseCsvNumber(eval.rows.last().at(eval.column("val_loss"))));
    }

    void nearestRowAtOrBeforeTheStep()
    {
        // A checkpoint whose own row was lost (metrics.csv cut short) takes the last row before it.
        const QString copy = m_root.path() + QStringLiteral("/cut");
        QDir().mkpath(copy + QStringLiteral("/checkpoints"));
        QFile::copy(m_run + QStringLiteral("/checkpoints/step-00000020.pt"), copy + QStringLiteral("/checkpoints/step-00000020.pt"));
        const CsvTable metrics = readCsvTable(m_run + QStringLiteral("/metrics.csv"), QStringLiteral("metrics.csv"));
        QByteArray cut = metrics.header.join(',') + '\n';
        for (int row = 0; row < 17; ++row) cut += metrics.rows.at(row).join(',') + '\n';   // steps 1..17
        test::writeFile(copy + QStringLiteral("/metrics.csv"), cut);
        const auto list = listRunCheckpoints(copy);
        QCOMPARE(list.size(), 1);
        QCOMPARE(list.first().step, qint64(20));
        QCOMPARE(list.first().metricsStep, std::optional<qint64>(17));
        QCOMPARE(*list.first().loss, *parseCsvNumber(metrics.rows.at(16).at(metrics.column("loss"))));
    }

    void ignoresOtherFilesAndAbandonedTimelines()
    {
        const QString dir = m_root.path() + QStringLiteral("/other");
        test::writeFile(dir + QStringLiteral("/checkpoints/step-00000007.pt.tmp-99"), "half");
        test::writeFile(dir + QStringLiteral("/checkpoints/abandoned-20261130T101500Z/step-00000009.pt"), "old");
        test::writeFile(dir + QStringLiteral("/checkpoints/notes.pt"), "x");
        test::writeFile(dir + QStringLiteral("/checkpoints/step-00000003.pt"), "ckpt");
        const auto list = listRunCheckpoints(dir);
        QCOMPARE(list.size(), 1);
        QCOMPARE(list.first().step, qint64(3));
        QVERIFY(!list.first().loss.has_value());   // no metrics.csv
        QVERIFY(listRunCheckpoints(m_root.path() + QStringLiteral("/missing")).isEmpty());
        QCOMPARE(checkpointStepOfName(QStringLiteral("step-00000120.pt")), qint64(120));
        QCOMPARE(checkpointStepOfName(QStringLiteral("step-1.pt.tmp")), qint64(-1));
    }
};

QTEST_GUILESS_MAIN(TestCheckpointList)
#include "tst_checkpoint_list.moc"
