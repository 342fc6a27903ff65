#include "ui/panes/gpu_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace ringmaster::ui {
namespace {

constexpr int kRefreshMs = 2000;
enum Column { kSelect, kName, kMemory, kUtil, kTemp, kColumns };

} // namespace

GpuPanel::GpuPanel(QWidget* parent)
    : QWidget(parent)
    , m_table(new QTableWidget(0, kColumns, this))
    , m_cpuRanks(new QSpinBox(this))
    , m_freeCount(new QSpinBox(this))
    , m_selectFree(new QPushButton(tr("Select next free"), this))
    , m_status(new QLabel(this))
{
    m_table->setHorizontalHeaderLabels({tr("GPU"), tr("Name"), tr("Memory"), tr("Util"), tr("Temp")});
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(kName, QHeaderView::Stretch);
    m_table->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setToolTip(tr("Tick the GPUs to train on: rank i runs on the i-th ticked GPU"));
    m_table->setMaximumHeight(180);
    connect(m_table, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
        if (item->column() == kSelect) Q_EMIT selectionChanged();
    });
    m_cpuRanks->setRange(0, 64);
    m_cpuRanks->setValue(2);
    m_cpuRanks->setToolTip(tr("Data-parallel ranks on the CPU (gloo); each gets cores / ranks threads"));
    connect(m_cpuRanks, &QSpinBox::valueChanged, this, &GpuPanel::selectionChanged);
    m_freeCount->setRange(1, 64);
    m_freeCount->setValue(2);
    m_freeCount->setToolTip(tr("How many free GPUs to select"));
    m_selectFree->setToolTip(tr("Select the first N GPUs that no other process is using"));
    connect(m_selectFree, &QPushButton::clicked, this, [this] { selectNextFree(m_freeCount->value()); });
    m_status->setWordWrap(true);

    auto* gpuRow = new QHBoxLayout;
    gpuRow->addWidget(m_freeCount);
    gpuRow->addWidget(m_selectFree);
    gpuRow->addStretch(1);
    auto* cpuRow = new QHBoxLayout;
    auto* cpuLabel = new QLabel(tr("CPU ranks"), this);
    cpuRow->addWidget(cpuLabel);
    cpuRow->addWidget(m_cpuRanks);
    cpuRow->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_status);
    layout->addWidget(m_table);
    layout->addLayout(gpuRow);
    layout->addLayout(cpuRow);

    refresh();
    const bool gpus = hasGpus();
    m_table->setVisible(gpus);
    m_freeCount->setVisible(gpus);
    m_selectFree->setVisible(gpus);
    // CPU ranks are the fallback for a machine without NVIDIA GPUs.
    m_cpuRanks->setVisible(!gpus);
    cpuLabel->setVisible(!gpus);
    if (gpus) selectNextFree(m_gpuCount);
    m_refresh.setInterval(kRefreshMs);
    connect(&m_refresh, &QTimer::timeout, this, &GpuPanel::refresh);
    if (m_inventory.available()) m_refresh.start();
}

void GpuPanel::refresh()
{
    m_gpus = m_inventory.query();
    const QList<int> selected = selectedGpus();
    const QSignalBlocker blocker(m_table);
    m_table->setRowCount(static_cast<int>(m_gpus.size()));
    for (int row = 0; row < m_gpus.size(); ++row) {
        const auto& gpu = m_gpus.at(row);
        auto* check = m_table->item(row, kSelect);
        if (!check) {
            check = new QTableWidgetItem;
            check->setFlags(Qt::ItemIsUserCheckable | Qt::ItemIsEnabled);
            check->setCheckState(Qt::Unchecked);
            m_table->setItem(row, kSelect, check);
        }
        check->setText(QString::number(gpu.index));
        check->setData(Qt::UserRole, gpu.index);
        const int others = otherProcesses(gpu);
        const bool busy = others > 0;
        auto set = [&](int column, const QString& text) {
            auto* item = m_table->item(row, column);
            if (!item) m_table->setItem(row, column, item = new QTableWidgetItem);
            item->setText(text);
            item->setForeground(busy ? QColor(176, 96, 0) : QColor());
            item->setToolTip(busy ? tr("%1 other process(es) use this GPU").arg(others) : QString());
        };
        set(kName, busy ? gpu.name + tr("  (in use)") : gpu.name);
        set(kMemory, tr("%1 / %2 GiB").arg(gpu.memoryUsedMiB / 1024.0, 0, 'f', 1).arg(gpu.memoryTotalMiB / 1024.0, 0, 'f', 1));
        set(kUtil, gpu.utilizationPercent >= 0 ? tr("%1%").arg(gpu.utilizationPercent) : tr("–"));
        set(kTemp, gpu.temperatureC >= 0 ? tr("%1 °C").arg(gpu.temperatureC) : tr("–"));
    }
    const bool changed = m_gpuCount != m_gpus.size();
    m_gpuCount = static_cast<int>(m_gpus.size());
    m_status->setText(m_gpuCount > 0 ? tr("%1 NVIDIA GPU(s)").arg(m_gpuCount)
                                     : tr("No NVIDIA GPU: training runs as CPU ranks (gloo). %1").arg(m_inventory.unavailableReason()));
    if (changed) setSelectedGpus(selected);
}

QList<int> GpuPanel::selectedGpus() const
{
    QList<int> gpus;
    for (int row = 0; row < m_table->rowCount(); ++row) {
        const auto* item = m_table->item(row, kSelect);
        if (item && item->checkState() == Qt::Checked) gpus.append(item->data(Qt::UserRole).toInt());
    }
    return gpus;
}

int GpuPanel::cpuRanks() const
{
    return m_cpuRanks->value();
}

void GpuPanel::setSelectedGpus(const QList<int>& gpus)
{
    {
        const QSignalBlocker blocker(m_table);
        for (int row = 0; row < m_table->rowCount(); ++row) {
            if (auto* item = m_table->item(row, kSelect)) {
                item->setCheckState(gpus.contains(item->data(Qt::UserRole).toInt()) ? Qt::Checked : Qt::Unchecked);
            }
        }
    }
    Q_EMIT selectionChanged();
}

void GpuPanel::setCpuRanks(int ranks)
{
    m_cpuRanks->setValue(ranks);
}

void GpuPanel::selectNextFree(int count)
{
    QList<int> chosen;
    for (const auto& gpu : m_gpus) {
        if (chosen.size() == count) break;
        if (otherProcesses(gpu) == 0) chosen.append(gpu.index);
    }
    setSelectedGpus(chosen);
}

int GpuPanel::otherProcesses(const supervisor::GpuInfo& gpu) const
{
    if (gpu.processPids.isEmpty()) return gpu.otherProcesses; // counts only: cannot tell ours apart
    const QList<qint64> own = m_ownPids ? m_ownPids() : QList<qint64>();
    int others = 0;
    for (const qint64 pid : gpu.processPids) others += own.contains(pid) ? 0 : 1;
    return others;
}

bool GpuPanel::isBusy(int gpuIndex) const
{
    for (const auto& gpu : m_gpus) {
        if (gpu.index == gpuIndex) return otherProcesses(gpu) > 0;
    }
    return false;
}

} // namespace ringmaster::ui
