// The job form's "Where: Slurm cluster" (SlurmFields): job -> form -> job gives back the same
// "launch.slurm" (the cluster's default partition shown selected but written back as the job had it), the
// local GPU selection never decides a Slurm job's GPUs and the local-only fields are greyed out with the
// reason, bad input (a time that is not one, an option Ringmaster sets, tasks that do not match the GPUs, a
// request the partition cannot hold) is listed and keeps the form invalid, and the partition list comes
// from sinfo off the GUI thread (stubs of Slurm's tools: tests/support/slurm_fixtures.h), including
// what the form says when sinfo is missing or the controller does not answer. No real Slurm here.
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include "ui_test_support.h"
#include "ui/form/job_form.h"
#include "ui/form/slurm_fields.h"
#include "slurm_fixtures.h"

using ringmaster::supervisor::JobSpec;
using ringmaster::supervisor::SlurmCommands;
using ringmaster::supervisor::SlurmRequest;
using ringmaster::supervisor::slurmtest::Stubs;
using ringmaster::ui::JobForm;
using ringmaster::ui::SlurmFields;

using ringmaster::ui::test::settled;

namespace {

constexpr int kCheckTimeoutMs = 60000;
constexpr int kSlurmPlace = 1;   // the "Where" box: This machine, Slurm cluster

// sinfo -h -o '%P|%a|%l|%F|%G': a default CPU partition, a GPU partition in two node groups, one that is down.
constexpr char kSinfo[] = "debug*|up|infinite|0/1/0/1|(null)\n"
                          "gpu|up|2-00:00:00|1/2/1/4|gpu:a100:4\n"
                          "gpu|up|2-00:00:00|0/1/0/1|gpu:a100:8(S:0-1)\n"
                          "old|down|1:00:00|0/0/2/2|(null)\n";

// sinfo -h -N -O 'PartitionName:0|,StateCompact:0|,Gres:0|,GresUsed:0': the same nodes, with the GPUs in
// use; free on the idle and mixed ones: 4 + 3 + 2 (the allocated node's free GPU cannot be had).
constexpr char kSinfoNodes[] = "debug|idle|(null)|(null)\n"
                               "gpu|idle|gpu:a100:4|gpu:a100:0(IDX:N/A)\n"
                               "gpu|mix|gpu:a100:4|gpu:a100:1(IDX:0)\n"
                               "gpu|alloc|gpu:a100:4|gpu:a100:3(IDX:0-2)\n"
                               "gpu|down*|gpu:a100:4|gpu:a100:0(IDX:N/A)\n"
                               "gpu|mix|gpu:a100:8(S:0-1)|gpu:a100:6(IDX:0-5)\n"
                               "old|down*|(null)|(null)\n"
                               "old|down*|(null)|(null)\n";

bool mentions(const QStringList& problems, const QString& needle)
{
    for (const QString& problem : problems) {
        if (problem.contains(needle)) return true;
    }
    return false;
}

bool outlined(const QWidget* widget)
{
    return widget->styleSheet().contains(QStringLiteral("#d62728"));
}

// A job the form can hold without a dataset on disk: the linear model on synthetic data.
JobSpec linearJob()
{
    JobSpec job;
    job.setTrainerOption(QStringLiteral("model"), QStringLiteral("linear"));
    job.setTrainerOption(QStringLiteral("data"), QStringLiteral("synthetic"));
    job.setTrainerOption(QStringLiteral("epochs"), 1);
    return job;
}

} // namespace

class TestSlurmForm : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    Stubs m_stubs;

    // A form whose Slurm fields ask the stubs.
    void useStubs(JobForm& form) { form.slurmFields()->setCommands(SlurmCommands::inFolder(m_stubs.path())); }

private Q_SLOTS:
    void initTestCase()
    {
        QDir::setCurrent(m_dir.path()); // the default output folder "runs" is made here
        m_stubs.answer("sinfo", kSinfo);
    }

    void roundTripCarriesLaunchSlurm_data()
    {
        QTest::addColumn<QString>("device");
        QTest::addColumn<int>("nproc");
        QTest::addColumn<QByteArray>("slurm");
        QTest::newRow("cpu, every field") << QStringLiteral("cpu") << 3
                                          << QByteArray(R"({"nodes": 1, "ntasks_per_node": 2, "gpus_per_node": 0, "partition": "debug",
                                                "time": "0-02:00:00", "account": "proj42", "extra_args": ["--mem=4G", "--qos=high"]})");
        // Empty partition: the cluster's default is shown selected, and "" is written back.
        QTest::newRow("cpu, cluster default, auto tasks") << QStringLiteral("cpu") << 2 << QByteArray(R"({"nodes": 1})");
        QTest::newRow("cuda, one task per GPU") << QStringLiteral("cuda") << 1
                                                << QByteArray(R"({"nodes": 2, "gpus_per_node": 4, "partition": "gpu", "time": "90"})");
        // A job from a submitted run keeps its job id and a partition sinfo does not list.
        QTest::newRow("submitted, unlisted partition") << QStringLiteral("cpu") << 2
                                                       << QByteArray(R"({"partition": "gone", "job_id": "57", "time": "UNLIMITED"})");
    }
    void roundTripCarriesLaunchSlurm()
    {
        QFETCH(QString, device);
        QFETCH(int, nproc);
        QFETCH(QByteArray, slurm);
        JobSpec job = linearJob();
        job.device = device;
        job.nproc = nproc;
        job.slurm = SlurmRequest::fromJson(QJsonDocument::fromJson(slurm).object(), QStringLiteral("test"));
        JobForm form;
        useStubs(form);
        form.setJob(job);
        QVERIFY(form.isSlurm());
        QCOMPARE(form.whereBox()->currentIndex(), kSlurmPlace);
        QVERIFY(settled(form, kCheckTimeoutMs));   // the partitions are listed: the default one is now shown selected
        QVERIFY(form.slurmFields()->partitions().error.isEmpty());
        // Whatever this machine's GPU panel says, the Slurm job is the same job.
        const JobSpec back = form.job(QStringLiteral("cuda"), 7, {0, 1, 3});
        QCOMPARE(back.toJson(), job.toJson());
        QCOMPARE(back.slurm.toJson(), job.slurm.toJson());
        // And once more through the form (form -> job -> form -> job).
        JobForm again;
        useStubs(again);
        again.setJob(back);
        QVERIFY(settled(again, kCheckTimeoutMs));
        QCOMPARE(again.job(QStringLiteral("cpu"), 1, {}).toJson(), job.toJson());
    }

    void choosingSlurmWritesTheRequestNotTheLocalGpus()
    {
        JobForm form;
        useStubs(form);
        form.setJob(linearJob());
        QVERIFY(!form.isSlurm());
        QVERIFY(!form.slurmFields()->isVisibleTo(&form));
        QVERIFY(!form.job(QStringLiteral("cuda"), 2, {0, 1}).slurm.enabled);
        QVERIFY(!form.job(QStringLiteral("cuda"), 2, {0, 1}).toJson().value(QStringLiteral("launch")).toObject().contains(QStringLiteral("slurm")));
        QVERIFY(form.heartbeatBox()->isEnabled());

        form.whereBox()->setCurrentIndex(kSlurmPlace);
        QVERIFY(form.slurmFields()->isVisibleTo(&form));
        QVERIFY(settled(form, kCheckTimeoutMs));
        // The default partition is preselected, described by sinfo's numbers.
        QCOMPARE(form.slurmFields()->partitionBox()->currentData().toString(), QStringLiteral("debug"));
        form.slurmFields()->nodesBox()->setValue(1);
        form.slurmFields()->tasksBox()->setValue(2);
        form.slurmFields()->timeEdit()->setText(QStringLiteral("30:00"));
        QVERIFY2(form.isValid(), qPrintable(form.problems().join(QLatin1Char('\n'))));
        const JobSpec job = form.job(QStringLiteral("cuda"), 4, {0, 1});
        QVERIFY(job.slurm.enabled);
        QCOMPARE(job.device, QStringLiteral("cpu"));   // no GPUs per node: a CPU job, whatever the panel picked
        QVERIFY(job.gpus.isEmpty());
        QCOMPARE(job.slurm.ntasksPerNode, 2);
        QCOMPARE(job.slurm.time, QStringLiteral("30:00"));
        QCOMPARE(job.slurm.partition, QString());   // untouched: the cluster's default, as the job had it
        QCOMPARE(job.worldSize(), 2);
        QCOMPARE(form.worldSize(), 2);
        // GPUs per node make it a cuda job on the allocation's GPUs.
        form.slurmFields()->tasksBox()->setValue(0);
        form.slurmFields()->gpusBox()->setValue(4);
        form.slurmFields()->nodesBox()->setValue(2);
        const JobSpec gpuJob = form.job(QStringLiteral("cpu"), 4, {});
        QCOMPARE(gpuJob.device, QStringLiteral("cuda"));
        QVERIFY(gpuJob.gpus.isEmpty());
        QCOMPARE(gpuJob.worldSize(), 8);
        QVERIFY(form.slurmFields()->ranksLabel()->text().contains(QStringLiteral("= 8 rank(s)")));
        // Choosing a partition is written.
        form.slurmFields()->partitionBox()->setCurrentIndex(form.slurmFields()->partitionBox()->findData(QStringLiteral("gpu")));
        QCOMPARE(form.job(QStringLiteral("cpu"), 4, {}).slurm.partition, QStringLiteral("gpu"));
        // The built-in trainer's heartbeats reach the launcher from the nodes: hang detection applies under Slurm; a
        // script's tasks send none, so for a script it is greyed out, the tooltip saying why.
        QVERIFY(form.heartbeatBox()->isEnabled());
        form.kindBox()->setCurrentIndex(1);
        QVERIFY(!form.heartbeatBox()->isEnabled());
        QVERIFY(form.heartbeatBox()->toolTip().contains(QStringLiteral("Not used under Slurm for a script")));
        form.kindBox()->setCurrentIndex(0);
        QVERIFY(form.heartbeatBox()->isEnabled());
        // Back to this machine: no Slurm request, the fields apply again with their own tooltips.
        form.whereBox()->setCurrentIndex(0);
        QVERIFY(!form.job(QStringLiteral("cpu"), 2, {}).slurm.enabled);
        QVERIFY(form.heartbeatBox()->isEnabled());
        QVERIFY(!form.heartbeatBox()->toolTip().contains(QStringLiteral("Slurm")));
    }

    void badInputIsListedAndOutlined()
    {
        JobForm form;
        useStubs(form);
        form.setJob(linearJob());
        form.whereBox()->setCurrentIndex(kSlurmPlace);
        QVERIFY(settled(form, kCheckTimeoutMs));
        QVERIFY2(form.isValid(), qPrintable(form.problems().join(QLatin1Char('\n'))));
        SlurmFields* slurm = form.slurmFields();

        slurm->timeEdit()->setText(QStringLiteral("soon"));
        QVERIFY(!form.isValid());
        QVERIFY2(mentions(form.problems(), QStringLiteral("Time limit \"soon\" is not a Slurm time")), qPrintable(form.problems().join(QLatin1Char('\n'))));
        QVERIFY(outlined(slurm->timeEdit()));
        QVERIFY(form.problemLabel()->text().contains(QStringLiteral("0-02:00:00")));   // the fix is named
        slurm->timeEdit()->setText(QStringLiteral("1-12"));
        QVERIFY(form.isValid());
        QVERIFY(!outlined(slurm->timeEdit()));

        slurm->extraEdit()->setText(QStringLiteral("--mem=4G --nodes=2"));
        QVERIFY(mentions(form.problems(), QStringLiteral("is set by Ringmaster")));
        QVERIFY(outlined(slurm->extraEdit()));
        slurm->extraEdit()->setText(QStringLiteral("--mem=4G"));
        QVERIFY(form.isValid());

        slurm->gpusBox()->setValue(4);
        slurm->tasksBox()->setValue(3);
        QVERIFY(mentions(form.problems(), QStringLiteral("must be auto or equal GPUs per node")));
        slurm->tasksBox()->setValue(0);
        // The default partition (debug) has no GPUs and one node: pre-flight's checks, in the form.
        QVERIFY(mentions(form.problems(), QStringLiteral("the nodes of Slurm partition debug have 0 GPU(s)")));
        slurm->gpusBox()->setValue(0);
        slurm->nodesBox()->setValue(3);
        QVERIFY(mentions(form.problems(), QStringLiteral("Slurm partition debug has 1 node(s)")));
        slurm->partitionBox()->setCurrentIndex(slurm->partitionBox()->findData(QStringLiteral("gpu")));
        QVERIFY2(form.isValid(), qPrintable(form.problems().join(QLatin1Char('\n'))));   // 5 nodes there
        slurm->timeEdit()->setText(QStringLiteral("3-00:00:00"));
        QVERIFY(mentions(form.problems(), QStringLiteral("longer than the time limit of Slurm partition gpu (2-00:00:00)")));
        slurm->partitionBox()->setCurrentIndex(slurm->partitionBox()->findData(QStringLiteral("old")));
        QVERIFY(mentions(form.problems(), QStringLiteral("Slurm partition old is not up")));
    }

    void partitionsAreListedOffTheGuiThread()
    {
        Stubs stubs;
        stubs.answer("sinfo", kSinfo);
        ringmaster::supervisor::slurmtest::writeFile(stubs.path() + QStringLiteral("/sinfo.nodes.out"), kSinfoNodes);
        ringmaster::supervisor::slurmtest::writeFile(stubs.path() + QStringLiteral("/sinfo.sleep"), "1");
        JobForm form;
        form.slurmFields()->setCommands(SlurmCommands::inFolder(stubs.path()));
        form.setJob(linearJob());
        QVERIFY(stubs.args("sinfo").isEmpty());   // a job for this machine never asks Slurm
        QElapsedTimer clock;
        clock.start();
        form.whereBox()->setCurrentIndex(kSlurmPlace);
        QVERIFY2(clock.elapsed() < 500, "sinfo ran on the GUI thread");
        QVERIFY(form.isChecking());                // Start waits for the list
        QVERIFY(form.slurmFields()->partitionNote()->text().contains(QStringLiteral("asking Slurm")));
        QSignalSpy listed(form.slurmFields(), &SlurmFields::partitionsListed);
        QVERIFY(listed.wait(kCheckTimeoutMs));
        QVERIFY(!form.isChecking());
        QCOMPARE(stubs.args("sinfo").trimmed(),
                 QStringLiteral("-h -o %P|%a|%l|%F|%G\n-h -N -O PartitionName:0|,StateCompact:0|,Gres:0|,GresUsed:0"));

        QComboBox* box = form.slurmFields()->partitionBox();
        QCOMPARE(box->count(), 3);
        QCOMPARE(box->itemText(0), QStringLiteral("debug (default) · 1/1 nodes idle · no GPUs · limit infinite"));
        QCOMPARE(box->itemText(1), QStringLiteral("gpu · 3/5 nodes idle · 8 GPU(s)/node (9 free) · limit 2-00:00:00"));
        QCOMPARE(box->itemText(2), QStringLiteral("old · 0/2 nodes idle · no GPUs · limit 1:00:00 · not up"));
        QCOMPARE(box->currentIndex(), 0);          // the default, preselected
        QVERIFY(box->itemData(1, Qt::ToolTipRole).toString().contains(QStringLiteral("gpu:a100:8")));
        // Under the list, the chosen partition in full (the box itself may be cut to the panel's width).
        QCOMPARE(form.slurmFields()->partitionNote()->text(), box->itemText(0));
        box->setCurrentIndex(1);
        QVERIFY(form.slurmFields()->partitionNote()->text().endsWith(QStringLiteral(" · gres gpu:a100:4,gpu:a100:8(S:0-1)")));

        // Refresh asks again; the user's choice survives a new list.
        box->setCurrentIndex(1);
        stubs.answer("sinfo", "debug*|up|infinite|0/1/0/1|(null)\ngpu|up|2-00:00:00|5/5/0/5|gpu:a100:8\n");
        form.slurmFields()->refreshButton()->click();
        QVERIFY(listed.wait(kCheckTimeoutMs));
        QCOMPARE(box->count(), 2);
        QCOMPARE(box->currentData().toString(), QStringLiteral("gpu"));
        QVERIFY(box->currentText().contains(QStringLiteral("5/5 nodes idle")));
        QCOMPARE(form.job(QStringLiteral("cpu"), 2, {}).slurm.partition, QStringLiteral("gpu"));
    }

    void unreachableControllerIsSaidInTheForm()
    {
        Stubs stubs;
        stubs.answer("sinfo", "", "sinfo: error: slurm_load_partitions: Unable to contact slurm controller (connect failure)\n", 1);
        JobForm form;
        form.slurmFields()->setCommands(SlurmCommands::inFolder(stubs.path()));
        form.setJob(linearJob());
        form.whereBox()->setCurrentIndex(kSlurmPlace);
        QVERIFY(settled(form, kCheckTimeoutMs));
        QLabel* note = form.slurmFields()->partitionNote();
        QVERIFY(note->isVisibleTo(&form));
        QVERIFY2(note->text().contains(QStringLiteral("Unable to contact slurm controller (connect failure)")), qPrintable(note->text()));
        QVERIFY2(note->text().contains(QStringLiteral("scontrol ping")), qPrintable(note->text()));   // what to do
        QVERIFY(!form.isValid());
        QVERIFY(mentions(form.problems(), QStringLiteral("Slurm's partitions could not be listed")));
        // The controller comes back: Refresh, and the form is valid.
        stubs.answer("sinfo", kSinfo);
        QSignalSpy listed(form.slurmFields(), &SlurmFields::partitionsListed);
        form.slurmFields()->refreshButton()->click();
        QVERIFY(listed.wait(kCheckTimeoutMs));
        QVERIFY2(form.isValid(), qPrintable(form.problems().join(QLatin1Char('\n'))));
        QVERIFY(!note->text().contains(QStringLiteral("could not be listed")));
        QVERIFY(note->text().startsWith(QStringLiteral("debug (default)")));
    }

    void missingSinfoIsSaidInTheForm()
    {
        JobForm form;
        SlurmCommands commands;
        commands.sinfo = m_dir.filePath(QStringLiteral("no-such-dir/sinfo"));
        form.slurmFields()->setCommands(commands);
        form.setJob(linearJob());
        form.whereBox()->setCurrentIndex(kSlurmPlace);
        QVERIFY(settled(form, kCheckTimeoutMs));
        const QString note = form.slurmFields()->partitionNote()->text();
        QVERIFY2(note.contains(QStringLiteral("not found")) && note.contains(QStringLiteral("apt install slurm-client")), qPrintable(note));
        QVERIFY(!form.isValid());
    }
};

QTEST_MAIN(TestSlurmForm)
#include "tst_slurm_form.moc"
