#pragma once
// Every NVIDIA GPU with its index, name, memory, utilisation and temperature, refreshed every 2 s,
// with a checkbox to select it, a "next N free" shortcut, and a mark on GPUs that other processes
// use. This app's own ranks do not make a GPU busy (setOwnPids tells which processes are ours).
// Without NVML (no driver) it offers CPU ranks instead.

#include <QTimer>
#include <QWidget>

#include <functional>

#include "supervisor/gpu_inventory.h"

class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace ringmaster::ui {

class GpuPanel : public QWidget
{
    Q_OBJECT

public:
    explicit GpuPanel(QWidget* parent = nullptr);

    bool hasGpus() const { return m_gpuCount > 0; }
    QString device() const { return hasGpus() ? QStringLiteral("cuda") : QStringLiteral("cpu"); }
    QList<int> selectedGpus() const;
    int cpuRanks() const;
    int worldSize() const { return hasGpus() ? static_cast<int>(selectedGpus().size()) : cpuRanks(); }
    void setSelectedGpus(const QList<int>& gpus);
    void setCpuRanks(int ranks);
    void refresh();
    // The pids of this app's own running ranks, asked at each refresh: they do not make a GPU busy.
    void setOwnPids(std::function<QList<qint64>()> ownPids) { m_ownPids = std::move(ownPids); }
    // Whether a process other than this app's ranks computes on the GPU (as of the last refresh).
    bool isBusy(int gpuIndex) const;
    void selectNextFree(int count);
    QTableWidget* table() const { return m_table; }
    QSpinBox* cpuRanksBox() const { return m_cpuRanks; }

Q_SIGNALS:
    void selectionChanged();

private:
    int otherProcesses(const supervisor::GpuInfo& gpu) const;

    supervisor::GpuInventory m_inventory;
    std::function<QList<qint64>()> m_ownPids;
    QTableWidget* m_table;
    QSpinBox* m_cpuRanks;
    QSpinBox* m_freeCount;
    QPushButton* m_selectFree;
    QLabel* m_status;
    QTimer m_refresh;
    int m_gpuCount = 0;
    QList<supervisor::GpuInfo> m_gpus;
};

} // namespace ringmaster::ui
