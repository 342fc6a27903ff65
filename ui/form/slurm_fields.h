#pragma once
// The job form's "Slurm cluster" fields: the job's "launch.slurm" (core/supervisor/slurm/slurm_request.h),
// what `ringmaster-launch --slurm` takes: the partition, nodes, tasks and GPUs per node, time limit,
// account and extra sbatch options. The partition list is Slurm's own (sinfo, through SlurmClient::
// partitions()), asked off the GUI thread when the panel is first shown and on Refresh; each entry shows
// its idle/total nodes, GPUs per node with the free ones (not in use on idle or partly used nodes, from
// sinfo's GresUsed, where sinfo gives it) and time limit, and the cluster's default partition is preselected.
// When sinfo is missing or the controller does not answer, the panel says so under the list and the form
// keeps Start disabled (pre-flight would refuse the job for the same reason). The request is checked as
// the pre-flight checks it (slurm_preflight.h: the partition exists and is up, the nodes, GPUs and time
// fit it) against the listed partitions.
// Under Slurm the allocation decides the GPUs: the job is a cuda job exactly when GPUs per node is above 0,
// and this machine's GPU selection is not part of it. Tasks per node "auto" (0) is one task per GPU on a
// GPU job, else the loaded job's CPU ranks (its nproc), as the batch script counts them.
// The panel edits the loaded request rather than replacing it: a partition left as the job had it (empty:
// the cluster's default) is written back as it was, even though the default is shown selected, and the
// job id of a submitted run is kept; so job -> form -> job gives back the same "launch.slurm".

#include <QFutureWatcher>
#include <QGroupBox>

#include "supervisor/job_spec.h"
#include "supervisor/slurm/slurm_client.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace ringmaster::ui {

class SlurmFields : public QGroupBox
{
    Q_OBJECT

public:
    explicit SlurmFields(QWidget* parent = nullptr);

    // The Slurm tools the partition list comes from (default: sinfo on PATH); tests point it at stubs.
    void setCommands(const supervisor::SlurmCommands& commands) { m_commands = commands; }

    void setJob(const supervisor::JobSpec& job);
    // Writes "launch.slurm" (enabled), the device (cuda when GPUs per node is above 0, else cpu), no GPUs of
    // this machine, and the CPU ranks "auto" tasks per node stand for.
    void apply(supervisor::JobSpec* job) const;
    // The panel is in use: the first activation lists the partitions.
    void setActive(bool active);
    // Asks sinfo again, off the GUI thread (the answer replaces the list when it comes).
    void refreshPartitions();

    // What is wrong now, one sentence each (the fit to the partition once the list is in).
    QStringList problems() const;
    // The partition list is being asked for.
    bool isListing() const { return m_listing.isRunning() || m_listPending; }
    // The ranks the job will have: nodes x tasks per node.
    int worldSize() const;
    // The last answer of sinfo (its error, or the partitions).
    const supervisor::SlurmPartitions& partitions() const { return m_listed; }
    supervisor::SlurmRequest request() const;

    QComboBox* partitionBox() const { return m_partition; }
    QPushButton* refreshButton() const { return m_refresh; }
    // "asking Slurm…", sinfo's failure (in red), or the chosen partition described in full.
    QLabel* partitionNote() const { return m_partitionNote; }
    QSpinBox* nodesBox() const { return m_nodes; }
    QSpinBox* tasksBox() const { return m_tasks; }
    QSpinBox* gpusBox() const { return m_gpus; }
    QLineEdit* timeEdit() const { return m_time; }
    QLineEdit* accountEdit() const { return m_account; }
    QLineEdit* extraEdit() const { return m_extra; }
    QLabel* ranksLabel() const { return m_ranks; }

Q_SIGNALS:
    // A field changed, or the partition list was answered.
    void changed();
    // sinfo answered (partitions() holds the answer).
    void partitionsListed();

private:
    void onListed();
    void fillPartitions();
    // Under the list: "asking…", why the list could not be had, or the chosen partition in full.
    void showNote();
    QString shownPartition() const;
    QStringList extraArguments() const;
    QString timeProblem() const;
    QString extraProblem() const;
    void revalidate();

    QComboBox* m_partition;
    QPushButton* m_refresh;
    QLabel* m_partitionNote;
    QSpinBox* m_nodes;
    QSpinBox* m_tasks;
    QSpinBox* m_gpus;
    QLabel* m_ranks;
    QLineEdit* m_time;
    QLineEdit* m_account;
    QLineEdit* m_extra;

    supervisor::SlurmCommands m_commands;
    supervisor::SlurmRequest m_loaded;   // the job's request as loaded (a default one for a local job)
    int m_nproc = 2;                     // the loaded job's CPU ranks: what "auto" tasks per node means on CPU
    bool m_partitionEdited = false;      // the user chose a partition since setJob
    bool m_filling = false;              // the list is being (re)filled: selection changes are not edits
    bool m_active = false;
    bool m_listedOnce = false;
    bool m_listPending = false;          // a refresh asked while one runs: ask again when it ends
    QFutureWatcher<supervisor::SlurmPartitions> m_listing;
    supervisor::SlurmPartitions m_listed;
    bool m_answered = false;             // m_listed holds an answer
};

} // namespace ringmaster::ui
