// GPU placement: which GPUs the ranks get and what CUDA_VISIBLE_DEVICES says, with and without an
// inherited CUDA_VISIBLE_DEVICES (a container, a Slurm allocation) and with or without NVML UUIDs.
#include <QTest>

#include "supervisor/gpu_placement.h"

using namespace ringmaster::supervisor;

namespace {

QList<GpuInfo> fourGpus(bool withUuids)
{
    QList<GpuInfo> gpus;
    for (int i = 0; i < 4; ++i) {
        GpuInfo gpu;
        gpu.index = i;
        if (withUuids) gpu.uuid = QStringLiteral("GPU-%1aaaaaaa-0000-0000-0000-00000000000%1").arg(i);
        gpus.append(gpu);
    }
    return gpus;
}

const QString kPciOrder = QStringLiteral("PCI_BUS_ID");

JobSpec cudaJob(int nproc, QList<int> gpus = {})
{
    JobSpec job;
    job.device = QStringLiteral("cuda");
    job.nproc = nproc;
    job.gpus = std::move(gpus);
    return job;
}

} // namespace

class TestGpuPlacement : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void nprocTakesTheFirstUsableGpus()
    {
        const auto placement = placeGpus(cudaJob(2), fourGpus(false), 4, QString(), kPciOrder);
        QVERIFY2(placement.error.isEmpty(), qPrintable(placement.error));
        QCOMPARE(placement.gpus, (QList<int>{0, 1}));
        QCOMPARE(placement.visibleDevices, QStringLiteral("0,1"));
    }

    void uuidsNameTheGpusWhenNvmlHasThem()
    {
        // UUIDs mean the same GPU whatever order CUDA enumerates in.
        const auto placement = placeGpus(cudaJob(2, {3, 1}), fourGpus(true), 4, QString(), kPciOrder);
        QVERIFY2(placement.error.isEmpty(), qPrintable(placement.error));
        QCOMPARE(placement.gpus, (QList<int>{3, 1}));
        QCOMPARE(placement.visibleDevices, QStringLiteral("GPU-3aaaaaaa-0000-0000-0000-000000000003,GPU-1aaaaaaa-0000-0000-0000-000000000001"));
    }

    void moreRanksThanGpusIsAnError()
    {
        const auto placement = placeGpus(cudaJob(5), fourGpus(false), 4, QString(), kPciOrder);
        QVERIFY2(placement.error.contains(QStringLiteral("--nproc 5: only 4 GPU(s) usable")), qPrintable(placement.error));
    }

    void inheritedVisibleDevicesAreTheUsableSet()
    {
        // Inherited by index: only GPUs 2 and 3 may be used; the default takes them, never 0 or 1.
        auto placement = placeGpus(cudaJob(2), fourGpus(false), 4, QStringLiteral("2,3"), kPciOrder);
        QVERIFY2(placement.error.isEmpty(), qPrintable(placement.error));
        QCOMPARE(placement.gpus, (QList<int>{2, 3}));
        QCOMPARE(placement.visibleDevices, QStringLiteral("2,3"));
        placement = placeGpus(cudaJob(3), fourGpus(false), 4, QStringLiteral("2,3"), kPciOrder);
        QVERIFY2(placement.error.contains(QStringLiteral("only 2 GPU(s) usable")), qPrintable(placement.error));
        QVERIFY2(placement.error.contains(QStringLiteral("CUDA_VISIBLE_DEVICES=2,3")), qPrintable(placement.error));
        placement = placeGpus(cudaJob(1, {0}), fourGpus(false), 4, QStringLiteral("2,3"), kPciOrder);
        QVERIFY2(placement.error.contains(QStringLiteral("GPU 0 is not usable here")), qPrintable(placement.error));
        // Inherited by UUID (as Slurm and containers often do): matched through NVML.
        placement = placeGpus(cudaJob(1), fourGpus(true), 4, QStringLiteral("GPU-2aaaaaaa-0000-0000-0000-000000000002"), kPciOrder);
        QVERIFY2(placement.error.isEmpty(), qPrintable(placement.error));
        QCOMPARE(placement.gpus, (QList<int>{2}));
        // "all" restricts nothing; an empty list leaves no GPU.
        QCOMPARE(usableGpus(fourGpus(false), 4, QStringLiteral("all")).size(), 4);
        QVERIFY(usableGpus(fourGpus(false), 4, QStringLiteral("")).isEmpty());
        QVERIFY(placeGpus(cudaJob(1), fourGpus(false), 4, QStringLiteral(""), kPciOrder).error.contains(QStringLiteral("no usable NVIDIA GPU")));
    }

    void inheritedIndicesAreRefusedWhenTheirOrderIsAmbiguous()
    {
        // CUDA numbers fastest-first unless told otherwise: with mixed models, "1" in an inherited
        // CUDA_VISIBLE_DEVICES need not be NVML's GPU 1, so indices are refused; UUIDs are fine.
        QList<GpuInfo> mixed = fourGpus(true);
        mixed[0].name = QStringLiteral("A100");
        for (int i = 1; i < 4; ++i) mixed[i].name = QStringLiteral("T4");
        auto placement = placeGpus(cudaJob(1), mixed, 4, QStringLiteral("1"), QString());
        QVERIFY2(placement.error.contains(QStringLiteral("fastest-first")), qPrintable(placement.error));
        QVERIFY(placeGpus(cudaJob(1), mixed, 4, QStringLiteral("1"), kPciOrder).error.isEmpty());
        QVERIFY(placeGpus(cudaJob(1), mixed, 4, mixed[1].uuid, QString()).error.isEmpty());
        // Same model everywhere: fastest-first ties fall back to bus order, indices agree.
        QVERIFY(placeGpus(cudaJob(1), fourGpus(true), 4, QStringLiteral("1"), QString()).error.isEmpty());
    }

    void badSelectionsNameTheGpu()
    {
        QVERIFY(placeGpus(cudaJob(2, {1, 1}), fourGpus(false), 4, QString(), kPciOrder).error.contains(QStringLiteral("GPU 1 is listed twice")));
        QVERIFY(placeGpus(cudaJob(1, {7}), fourGpus(false), 4, QString(), kPciOrder).error.contains(QStringLiteral("GPU 7 does not exist")));
        QVERIFY(placeGpus(cudaJob(1, {0}), {}, 0, QString(), kPciOrder).error.contains(QStringLiteral("no NVIDIA GPU found")));
    }
};

QTEST_GUILESS_MAIN(TestGpuPlacement)
#include "tst_gpu_placement.moc"
