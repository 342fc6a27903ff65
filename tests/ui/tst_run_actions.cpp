// The Runs tab's Actions (ui/runs/run_actions.h, ui/runs/export_job.h) on run directories made by hand
// (tests/support/run_fixture.h): scalars exported from the app equal `ringmaster-runs export`'s file, a
// bundle holds the originals byte for byte, a copied checkpoint is identical, a chart has the chosen size,
// an existing file is replaced only after a Yes, a failure leaves no file; the checkpoint picker and
// which runs may be resumed. In the Runs tab, the menu's scalar and chart exports take the ticked runs (the
// selected one when none is ticked), the chart as PNG, SVG and PDF at the size chosen in its dialog.
#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QPushButton>
#include <QSet>
#include <QSpinBox>
#include <QTimer>
#include <QXmlStreamReader>

#include <memory>
#include <tuple>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "ui/runs/checkpoint_picker.h"
#include "ui/runs/export_job.h"
#include "ui/runs/run_actions.h"
#include "protocol/run_lock.h"
#include "run_fixture.h"
#include "ui/runs/runs_model.h"
#include "ui/runs/runs_panel.h"

using namespace ringmaster;
using namespace ringmaster::ui;
using runs::test::makeTrainerRun;
using runs::test::readFile;
using runs::test::writeFile;

namespace {

constexpr int kExportTimeoutMs = 60000;

// Waits for the export RunActions started; its (ok, message).
std::pair<bool, QString> waitForExport(RunActions& actions, QSignalSpy& spy)
{
    if (!QTest::qWaitFor([&] { return !spy.isEmpty(); }, kExportTimeoutMs)) return {false, QStringLiteral("timed out")};
    Q_UNUSED(actions);
    const auto arguments = spy.takeFirst();
    return {arguments.at(0).toBool(), arguments.at(1).toString()};
}

// The `run` column of an exported CSV, as a set.
QSet<QString> exportedRunNames(const QString& csv)
{
    QSet<QString> names;
    const QList<QByteArray> lines = readFile(csv).split('\n');
    for (qsizetype i = 1; i < lines.size(); ++i) {
        if (!lines[i].isEmpty()) names.insert(QString::fromUtf8(lines[i].left(lines[i].indexOf(','))));
    }
    return names;
}

// Answers the chart's size dialog when it opens: WIDTH x HEIGHT, then OK. *seen tells whether it came.
std::shared_ptr<bool> answerChartSizeDialog(int width, int height)
{
    auto seen = std::make_shared<bool>(false);
    auto* timer = new QTimer;
    QObject::connect(timer, &QTimer::timeout, [timer, seen, width, height] {
        auto* dialog = qobject_cast<QDialog*>(QApplication::activeModalWidget());
        if (!dialog) return;
        const auto boxes = dialog->findChildren<QSpinBox*>();
        if (boxes.size() == 2) {
            boxes[0]->setValue(width);
            boxes[1]->setValue(height);
            *seen = true;
        }
        dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
        timer->stop();
        timer->deleteLater();
    });
    timer->start(20);
    return seen;
}

// The texts of an SVG file (its legend and axis labels); empty when it is not well-formed XML.
QStringList svgTexts(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    QXmlStreamReader xml(&file);
    QStringList texts;
    while (!xml.atEnd()) {
        if (xml.readNext() == QXmlStreamReader::Characters && !xml.isWhitespace()) texts << xml.text().toString().trimmed();
    }
    return xml.hasError() ? QStringList() : texts;
}

} // namespace

class TestRunActions : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_root;
    QStringList m_selection;

    std::unique_ptr<RunActions> makeActions()
    {
        auto actions = std::make_unique<RunActions>([this] { return m_selection; }, [] { return QString(); });
        actions->runner()->setShowMessages(false);
        actions->runner()->setConfirmOverwrite([](const QString& path) {
            qFatal("asked to replace %s without a test's answer", qPrintable(path));
            return false;
        });
        return actions;
    }

private Q_SLOTS:
    void scalarsOfTwoRunsEqualTheCliExport()
    {
        const QString cli = qEnvironmentVariable("RINGMASTER_RUNS");
        QVERIFY2(!cli.isEmpty(), "RINGMASTER_RUNS must name ringmaster-runs (run through ctest)");
        const QString a = makeTrainerRun(m_root.path(), QStringLiteral("20261130-100000-a"), 12);
        const QString b = makeTrainerRun(m_root.path(), QStringLiteral("20261130-110000-b"), 20, true);
        for (const QString& format : {QStringLiteral("csv"), QStringLiteral("json")}) {
            const QString fromCli = m_root.path() + QStringLiteral("/cli.") + format;
            QProcess process;
            process.start(cli, {QStringLiteral("export"), a, b, QStringLiteral("--out"), fromCli, QStringLiteral("--format"), format});
            QVERIFY(process.waitForFinished(kExportTimeoutMs));
            QCOMPARE(process.exitCode(), 0);

            auto actions = makeActions();
            QSignalSpy finished(actions->runner(), &ExportRunner::finished);
            const QString fromApp = m_root.path() + QStringLiteral("/app.") + format;
            QVERIFY(actions->exportScalars({a, b}, fromApp, format == QLatin1String("csv") ? runs::ExportFormat::Csv : runs::ExportFormat::Json));
            const auto [ok, message] = waitForExport(*actions, finished);
            QVERIFY2(ok, qPrintable(message));
            QVERIFY(message.contains(QStringLiteral("2 runs")));
            const QByteArray expected = readFile(fromCli);
            QVERIFY(expected.count('\n') > 30);   // both runs' rows, not just a header
            QCOMPARE(readFile(fromApp), expected);
        }
    }

    void bundleHoldsTheOriginals()
    {
        const QString run = makeTrainerRun(m_root.path(), QStringLiteral("20261130-120000-bundled"), 12);
        auto actions = makeActions();
        QSignalSpy finished(actions->runner(), &ExportRunner::finished);
        const QString archive = m_root.path() + QStringLiteral("/bundled.tar.gz");
        QVERIFY(actions->exportBundle(run, archive, {true, true}));
        const auto [ok, message] = waitForExport(*actions, finished);
        QVERIFY2(ok, qPrintable(message));
        const QString unpacked = m_root.path() + QStringLiteral("/unpacked");
        QVERIFY(QDir().mkpath(unpacked));
        QProcess tar;
        tar.start(QStringLiteral("tar"), {QStringLiteral("-xzf"), archive, QStringLiteral("-C"), unpacked});
        QVERIFY(tar.waitForFinished(kExportTimeoutMs));
        QCOMPARE(tar.exitCode(), 0);
        const QString top = unpacked + QStringLiteral("/20261130-120000-bundled/");
        for (const char* name : {"job.json", "summary.json", "metrics.csv", "eval.csv", "logs/rank-1.log",
                                 "checkpoints/step-00000010.pt", "model.pt"}) {
            const QString file = QString::fromLatin1(name);
            QVERIFY2(QFileInfo::exists(top + file), name);
            QCOMPARE(readFile(top + file), readFile(run + QLatin1Char('/') + file));
        }
        // Without checkpoints and model, as asked; a wrong extension is one clear refusal and no file.
        QVERIFY(actions->exportBundle(run, m_root.path() + QStringLiteral("/bundle.zip"), {}));
        const auto [refusedOk, refusal] = waitForExport(*actions, finished);
        QVERIFY(!refusedOk);
        QVERIFY2(refusal.contains(QStringLiteral("name it FILE.tar.gz")), qPrintable(refusal));
        QVERIFY(!QFileInfo::exists(m_root.path() + QStringLiteral("/bundle.zip")));
    }

    void copiedCheckpointIsIdentical()
    {
        const QString run = makeTrainerRun(m_root.path(), QStringLiteral("20261130-130000-copied"), 12);
        const QString checkpoint = run + QStringLiteral("/checkpoints/step-00000010.pt");
        auto actions = makeActions();
        QSignalSpy finished(actions->runner(), &ExportRunner::finished);
        const QString out = m_root.path() + QStringLiteral("/copy.pt");
        QVERIFY(actions->copyOut(checkpoint, out));
        const auto [ok, message] = waitForExport(*actions, finished);
        QVERIFY2(ok, qPrintable(message));
        QVERIFY(readFile(out).size() > 65536);
        QCOMPARE(readFile(out), readFile(checkpoint));
        // Onto itself: refused before anything is opened.
        QVERIFY(!actions->copyOut(checkpoint, checkpoint));
        QCOMPARE(readFile(checkpoint).size(), 70000);
    }

    void overwriteOnlyAfterYes()
    {
        const QString run = makeTrainerRun(m_root.path(), QStringLiteral("20261130-140000-twice"), 12);
        const QString out = m_root.path() + QStringLiteral("/existing.pt");
        writeFile(out, "keep me");
        auto actions = makeActions();
        QSignalSpy finished(actions->runner(), &ExportRunner::finished);
        QStringList asked;
        bool answer = false;
        actions->runner()->setConfirmOverwrite([&](const QString& path) {
            asked << path;
            return answer;
        });
        QVERIFY(!actions->copyOut(run + QStringLiteral("/model.pt"), out));   // No
        QCOMPARE(asked, QStringList{out});
        QCOMPARE(readFile(out), QByteArray("keep me"));
        QVERIFY(actions->runner()->lastMessage().contains(QStringLiteral("not replaced")));
        QVERIFY(!actions->exportScalars({run}, out, runs::ExportFormat::Csv));   // every export asks
        QCOMPARE(asked.size(), 2);
        QCOMPARE(readFile(out), QByteArray("keep me"));
        QTest::qWait(50);
        QVERIFY(finished.isEmpty());   // nothing started

        answer = true;                                                        // Yes
        QVERIFY(actions->copyOut(run + QStringLiteral("/model.pt"), out));
        const auto [ok, message] = waitForExport(*actions, finished);
        QVERIFY2(ok, qPrintable(message));
        QCOMPARE(asked.size(), 3);
        QCOMPARE(readFile(out), readFile(run + QStringLiteral("/model.pt")));
        // A new file is written without asking.
        QVERIFY(actions->copyOut(run + QStringLiteral("/model.pt"), m_root.path() + QStringLiteral("/fresh.pt")));
        QVERIFY(waitForExport(*actions, finished).first);
        QCOMPARE(asked.size(), 3);
    }

    void failureLeavesNoFile()
    {
        const QString run = makeTrainerRun(m_root.path(), QStringLiteral("20261130-150000-fails"), 12);
        auto actions = makeActions();
        QSignalSpy finished(actions->runner(), &ExportRunner::finished);
        // The folder named is a file (so even root cannot write there).
        const QString notAFolder = m_root.path() + QStringLiteral("/not-a-folder");
        writeFile(notAFolder, "a file");
        const QString out = notAFolder + QStringLiteral("/model.pt");
        QVERIFY(actions->copyOut(run + QStringLiteral("/model.pt"), out));
        const auto [ok, message] = waitForExport(*actions, finished);
        QVERIFY(!ok);
        QVERIFY2(message.contains(out) && message.contains(QStringLiteral("cannot write")), qPrintable(message));
        QCOMPARE(readFile(notAFolder), QByteArray("a file"));
        QCOMPARE(QDir(m_root.path()).entryList({QStringLiteral("*model*")}, QDir::Files | QDir::Hidden).size(), 0);
        QVERIFY(actions->exportScalars({run, m_root.path() + QStringLiteral("/no-such-run")},
                                       m_root.path() + QStringLiteral("/partial.csv"), runs::ExportFormat::Csv));
        const auto [ok2, message2] = waitForExport(*actions, finished);
        QVERIFY(!ok2);
        QVERIFY2(message2.contains(QStringLiteral("no-such-run")), qPrintable(message2));
        QVERIFY(!QFileInfo::exists(m_root.path() + QStringLiteral("/partial.csv")));
    }

    void chartHasTheChosenSize()
    {
        const QString a = makeTrainerRun(m_root.path(), QStringLiteral("20261130-160000-chart-a"), 12, true);
        const QString b = makeTrainerRun(m_root.path(), QStringLiteral("20261130-170000-chart-b"), 20, true);
        auto actions = makeActions();
        QSignalSpy finished(actions->runner(), &ExportRunner::finished);
        const QString png = m_root.path() + QStringLiteral("/chart.png");
        QVERIFY(actions->exportChart({a, b}, png, QSize(640, 480)));
        const auto [ok, message] = waitForExport(*actions, finished);
        QVERIFY2(ok, qPrintable(message));
        const QImage image(png);
        QCOMPARE(image.size(), QSize(640, 480));
        QVERIFY(actions->exportChart({a}, m_root.path() + QStringLiteral("/chart.gif"), QSize(640, 480)));
        QVERIFY(!waitForExport(*actions, finished).first);
        QVERIFY(!QFileInfo::exists(m_root.path() + QStringLiteral("/chart.gif")));
    }

    void runsTabExportsTheTickedRunsElseTheSelectedOne()
    {
        QTemporaryDir root;
        const QString a = makeTrainerRun(root.path(), QStringLiteral("20261201-100000-a"), 12, true);
        const QString b = makeTrainerRun(root.path(), QStringLiteral("20261201-110000-b"), 20, true);
        const QString c = makeTrainerRun(root.path(), QStringLiteral("20261201-120000-c"), 16, true);
        RunsPanel panel;
        panel.addRoot(root.path());
        QSignalSpy refreshed(&panel, &RunsPanel::refreshed);
        panel.refresh();
        QVERIFY(refreshed.wait(kExportTimeoutMs));
        RunActions* actions = panel.actions();
        actions->runner()->setShowMessages(false);
        actions->runner()->setConfirmOverwrite([](const QString& path) {
            qFatal("asked to replace %s without a test's answer", qPrintable(path));
            return false;
        });
        QString answer;   // the path "typed" in the save dialog
        actions->setSavePathAsker([&](const QString&, const QString&, const QString&) { return answer; });
        QSignalSpy finished(actions->runner(), &ExportRunner::finished);

        // a and b ticked in the table (as a click on their boxes does), c selected.
        RunsModel* model = panel.model();
        for (const QString& run : {a, b}) {
            QVERIFY(model->setData(model->index(model->rowOf(QDir::cleanPath(run)), RunsModel::Name), Qt::Checked, Qt::CheckStateRole));
        }
        panel.selectRuns({c});
        QCOMPARE(panel.selectedRuns(), QStringList{QDir::cleanPath(c)});
        actions->updateMenu();   // as when the menu opens
        QVERIFY2(actions->scalarsAction()->text().contains(QStringLiteral("2 ticked")), qPrintable(actions->scalarsAction()->text()));
        QVERIFY(actions->scalarsAction()->isEnabled());
        answer = root.path() + QStringLiteral("/ticked.csv");
        actions->scalarsAction()->trigger();
        auto [ok, message] = waitForExport(*actions, finished);
        QVERIFY2(ok, qPrintable(message));
        QCOMPARE(exportedRunNames(answer), (QSet<QString>{QStringLiteral("20261201-100000-a"), QStringLiteral("20261201-110000-b")}));

        // The chart of the ticked runs, at the size chosen in the dialog, as SVG, PDF and PNG.
        for (const QString& suffix : {QStringLiteral("svg"), QStringLiteral("pdf"), QStringLiteral("png")}) {
            answer = root.path() + QStringLiteral("/ticked.") + suffix;
            auto seen = answerChartSizeDialog(800, 600);
            actions->chartAction()->trigger();
            QVERIFY(*seen);
            std::tie(ok, message) = waitForExport(*actions, finished);
            QVERIFY2(ok, qPrintable(message));
            const QByteArray bytes = readFile(answer);
            if (suffix == QLatin1String("svg")) {
                QVERIFY(bytes.startsWith("<?xml"));
                QVERIFY(bytes.contains("viewBox=\"0 0 800 600\""));
                const QStringList texts = svgTexts(answer);
                QVERIFY2(texts.contains(QStringLiteral("20261201-100000-a · loss")) && texts.contains(QStringLiteral("20261201-110000-b · loss")),
                         qPrintable(texts.join(QLatin1Char('|'))));
                QVERIFY(!texts.contains(QStringLiteral("20261201-120000-c · loss")));
            } else if (suffix == QLatin1String("pdf")) {
                QVERIFY(bytes.startsWith("%PDF-"));
                QVERIFY(bytes.trimmed().endsWith("%%EOF"));
                const auto box = bytes.indexOf("/MediaBox");   // 800x600 pixels at 96 per inch: 600x450 points
                QVERIFY(box >= 0);
                QCOMPARE(bytes.mid(box, bytes.indexOf(']', box) + 1 - box), QByteArray("/MediaBox [0 0 600.000000 450.000000]"));
            } else {
                QVERIFY(bytes.startsWith("\x89PNG\r\n\x1a\n"));
                QCOMPARE(QImage(answer).size(), QSize(800, 600));
            }
            QVERIFY(bytes.size() > 1000);
        }

        // None ticked: the selected run.
        for (const QString& run : {a, b}) {
            QVERIFY(model->setData(model->index(model->rowOf(QDir::cleanPath(run)), RunsModel::Name), Qt::Unchecked, Qt::CheckStateRole));
        }
        QVERIFY(model->tickedRuns().isEmpty());
        actions->updateMenu();
        QVERIFY2(actions->scalarsAction()->text().contains(QStringLiteral("1 selected")), qPrintable(actions->scalarsAction()->text()));
        answer = root.path() + QStringLiteral("/selected.json");
        actions->scalarsAction()->trigger();
        std::tie(ok, message) = waitForExport(*actions, finished);
        QVERIFY2(ok, qPrintable(message));
        QVERIFY(readFile(answer).contains("\"run\": \"20261201-120000-c\"") || readFile(answer).contains("\"run\":\"20261201-120000-c\""));
        QVERIFY(!readFile(answer).contains("20261201-100000-a"));
        // Nothing ticked or selected: nothing to export.
        panel.selectRuns({});
        actions->updateMenu();
        QVERIFY(!actions->scalarsAction()->isEnabled());
        QVERIFY(!actions->chartAction()->isEnabled());
    }

    void pickerListsCheckpointsWithLoss()
    {
        const QString run = makeTrainerRun(m_root.path(), QStringLiteral("20261130-180000-picked"), 12);
        writeFile(run + QStringLiteral("/checkpoints/step-00000004.pt"), "four");
        CheckpointPicker picker(run, CheckpointPicker::Purpose::Resume);
        QCOMPARE(picker.table()->rowCount(), 2);
        QCOMPARE(picker.table()->item(0, 0)->text(), QStringLiteral("4"));
        QCOMPARE(picker.table()->item(0, 3)->text(), QStringLiteral("0.25"));   // metrics.csv: loss 1/step
        QCOMPARE(picker.table()->item(1, 3)->text(), QStringLiteral("0.1"));
        QCOMPARE(picker.selectedCheckpoint(), QFileInfo(run + QStringLiteral("/checkpoints/step-00000010.pt")).absoluteFilePath());   // the newest
        QVERIFY(picker.selectStep(4));
        QCOMPARE(picker.selectedCheckpoint(), QFileInfo(run + QStringLiteral("/checkpoints/step-00000004.pt")).absoluteFilePath());
        QVERIFY(!picker.selectStep(5));
    }

    void onlyStoppedOrFailedRunsResume()
    {
        const QString completed = makeTrainerRun(m_root.path(), QStringLiteral("20261130-190000-done"), 12);
        const QString stopped = makeTrainerRun(m_root.path(), QStringLiteral("20261130-200000-stopped"), 12);
        writeFile(stopped + QStringLiteral("/summary.json"), R"({"status": "stopped", "steps": 12})");
        QString active;
        RunActions actions([this] { return m_selection; }, [&] { return active; });
        QVERIFY(actions.resumeRefusal(completed).contains(QStringLiteral("completed")));
        QCOMPARE(actions.resumeRefusal(stopped), QString());
        m_selection = {stopped};
        actions.updateMenu();
        QVERIFY(actions.resumeAction()->isEnabled());
        QVERIFY(actions.newJobAction()->isEnabled());
        active = stopped;
        QVERIFY(actions.resumeRefusal(stopped).contains(QStringLiteral("running now")));
        actions.updateMenu();
        QVERIFY(!actions.resumeAction()->isEnabled());
        active.clear();
        {
            // Another launcher or window runs it now: it holds the run's lock (an OFD lock conflicts even
            // within this process), and the lock goes with it.
            protocol::RunLock lock;
            std::string detail;
            QVERIFY(lock.acquire(QFile::encodeName(stopped).toStdString(), &detail) == protocol::RunLock::Result::Taken);
            QVERIFY(actions.resumeRefusal(stopped).contains(QStringLiteral("another launcher or window")));
        }
        QCOMPARE(actions.resumeRefusal(stopped), QString());
        {
            // The run has just written its final status (after taking the lock) and is about to let go: it is
            // stopped, not running (the Runs tab listed such a run "running" for good in one race).
            protocol::RunLock lock;
            std::string detail;
            QVERIFY(lock.acquire(QFile::encodeName(stopped).toStdString(), &detail) == protocol::RunLock::Result::Taken);
            QFile summary(stopped + QStringLiteral("/summary.json"));
            QVERIFY(summary.open(QIODevice::ReadWrite));
            QVERIFY(summary.setFileTime(QDateTime::currentDateTime().addSecs(2), QFileDevice::FileModificationTime));
            summary.close();
            QCOMPARE(actions.resumeRefusal(stopped), QString());
        }
        QVERIFY(QDir(stopped + QStringLiteral("/checkpoints")).removeRecursively());
        QVERIFY(actions.resumeRefusal(stopped).contains(QStringLiteral("no checkpoint")));
        QSignalSpy newJob(&actions, &RunActions::newJobRequested);
        actions.newJobAction()->trigger();
        QCOMPARE(newJob.size(), 1);
        QCOMPARE(newJob.first().first().toString(), stopped);
        m_selection.clear();
    }
};

QTEST_MAIN(TestRunActions)
#include "tst_run_actions.moc"
