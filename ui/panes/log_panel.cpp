#include "ui/panes/log_panel.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QTabWidget>
#include <QVBoxLayout>

namespace ringmaster::ui {
namespace {

constexpr int kFlushIntervalMs = 100;

} // namespace

LogPanel::LogPanel(QWidget* parent)
    : QWidget(parent)
    , m_tabs(new QTabWidget(this))
    , m_level(new QComboBox(this))
    , m_search(new QLineEdit(this))
{
    m_level->addItems({tr("all levels"), tr("warnings and errors"), tr("errors only")});
    m_level->setToolTip(tr("Show only lines of this level or worse"));
    m_search->setPlaceholderText(tr("Filter lines…"));
    m_search->setClearButtonEnabled(true);
    m_search->setToolTip(tr("Show only lines containing this text"));
    connect(m_level, &QComboBox::currentIndexChanged, this, &LogPanel::refilter);
    connect(m_search, &QLineEdit::textChanged, this, &LogPanel::refilter);
    auto* filters = new QHBoxLayout;
    filters->addWidget(m_level);
    filters->addWidget(m_search, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(filters);
    layout->addWidget(m_tabs, 1);
    m_flushTimer.setInterval(kFlushIntervalMs);
    connect(&m_flushTimer, &QTimer::timeout, this, &LogPanel::flush);
    m_flushTimer.start();
    reset(0);
}

void LogPanel::reset(int ranks)
{
    m_tabs->clear();
    for (auto& tab : m_logTabs) delete tab.view;
    m_logTabs.clear();
    m_logTabs.resize(static_cast<std::size_t>(ranks) + 1);
    for (int i = 0; i <= ranks; ++i) {
        auto* view = new QPlainTextEdit(m_tabs);
        view->setReadOnly(true);
        view->setMaximumBlockCount(static_cast<int>(kLinesInMemory));
        view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
        view->setLineWrapMode(QPlainTextEdit::NoWrap);
        m_logTabs[static_cast<std::size_t>(i)].view = view;
        m_tabs->addTab(view, i == 0 ? tr("launcher") : tr("rank %1").arg(i - 1));
    }
}

LogPanel::Tab* LogPanel::tabFor(int rank)
{
    const auto index = static_cast<std::size_t>(rank + 1);
    return index < m_logTabs.size() ? &m_logTabs[index] : nullptr;
}

void LogPanel::append(int rank, const QString& line)
{
    Tab* tab = tabFor(rank);
    if (!tab) return;
    tab->lines.push_back(line);
    if (tab->lines.size() > kLinesInMemory) tab->lines.pop_front();
    if (passes(line)) tab->pending.append(line);
}

bool LogPanel::passes(const QString& line) const
{
    const int level = m_level->currentIndex();
    if (level >= 1) {
        const bool error = line.contains(QStringLiteral("[error]")) || line.contains(QStringLiteral("[critical]")) ||
                           line.contains(QStringLiteral("FAILED"));
        const bool warning = line.contains(QStringLiteral("[warning]"));
        if (level == 2 ? !error : !(error || warning)) return false;
    }
    return m_search->text().isEmpty() || line.contains(m_search->text(), Qt::CaseInsensitive);
}

void LogPanel::flush()
{
    for (auto& tab : m_logTabs) {
        if (tab.pending.isEmpty()) continue;
        QScrollBar* bar = tab.view->verticalScrollBar();
        const bool following = bar->value() == bar->maximum();
        tab.view->appendPlainText(tab.pending.join(QLatin1Char('\n')));
        tab.pending.clear();
        if (following) bar->setValue(bar->maximum());
    }
}

void LogPanel::refilter()
{
    for (auto& tab : m_logTabs) {
        QStringList shown;
        for (const auto& line : tab.lines) {
            if (passes(line)) shown.append(line);
        }
        tab.pending.clear();
        tab.view->setPlainText(shown.join(QLatin1Char('\n')));
        tab.view->verticalScrollBar()->setValue(tab.view->verticalScrollBar()->maximum());
    }
}

void LogPanel::showRank(int rank)
{
    if (rank + 1 < m_tabs->count()) m_tabs->setCurrentIndex(rank + 1);
}

QStringList LogPanel::lines(int rank) const
{
    const auto index = static_cast<std::size_t>(rank + 1);
    if (index >= m_logTabs.size()) return {};
    return QStringList(m_logTabs[index].lines.begin(), m_logTabs[index].lines.end());
}

} // namespace ringmaster::ui
