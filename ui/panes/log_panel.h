#pragma once
// A tab per rank plus the launcher's, following the tail, with a level filter and a search box.
// Memory is bounded: each tab keeps its last kLinesInMemory lines (the run's logs/ files keep all).
// Lines are buffered and appended in batches on a short timer.

#include <QStringList>
#include <QTimer>
#include <QWidget>

#include <deque>
#include <vector>

class QComboBox;
class QLineEdit;
class QPlainTextEdit;
class QTabWidget;

namespace ringmaster::ui {

class LogPanel : public QWidget
{
    Q_OBJECT

public:
    static constexpr std::size_t kLinesInMemory = 5000;

    explicit LogPanel(QWidget* parent = nullptr);
    // One tab for the launcher and one per rank; clears everything.
    void reset(int ranks);
    // rank -1: the launcher.
    void append(int rank, const QString& line);
    void showRank(int rank);
    // The lines a tab holds in memory (for tests and copy).
    QStringList lines(int rank) const;
    void flush();

private:
    struct Tab
    {
        QPlainTextEdit* view = nullptr;
        std::deque<QString> lines;
        QStringList pending;
    };
    bool passes(const QString& line) const;
    void refilter();
    Tab* tabFor(int rank);

    QTabWidget* m_tabs;
    QComboBox* m_level;
    QLineEdit* m_search;
    std::vector<Tab> m_logTabs; // index 0: launcher, rank r at r + 1
    QTimer m_flushTimer;
};

} // namespace ringmaster::ui
