#include "supervisor/system_files.h"

namespace ringmaster::supervisor {

SystemFiles::SystemFiles(RunDirectory& dir) : m_dir(dir), m_tensorboard(dir.path())
{
    if (!m_csv.open(m_dir.path())) m_dir.reportWriteFailure(m_csv.path(), m_csv.error());
}

void SystemFiles::append(const QList<SystemSample>& samples)
{
    if (m_csv.isOpen() && !m_csv.append(samples)) m_dir.reportWriteFailure(m_csv.path(), m_csv.error());
    if (!m_tensorboard.append(samples)) m_dir.reportWriteFailure(m_tensorboard.path(), m_tensorboard.error());
}

} // namespace ringmaster::supervisor
