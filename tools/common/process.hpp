// Child processes with their output in a file (tests, benchmarks), and temporary directories.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace xrc::tools {

class Process {
 public:
  // `env` entries are added to the current environment.
  Process(std::vector<std::string> argv, std::map<std::string, std::string> env, const std::string& logPath,
          bool stdinPipe = false);
  ~Process();  // SIGKILLs a process still running
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  std::string output() const;  // stdout + stderr so far
  // Waits until output contains `text`; false on timeout or if the process exited first.
  bool waitForOutput(const std::string& text, std::chrono::milliseconds timeout);
  void closeStdin();
  void signal(int sig);
  // Exit status (or 128 + signal); -1 on timeout.
  int wait(std::chrono::milliseconds timeout);
  bool running();

 private:
  pid_t pid_ = -1;
  int stdinFd_ = -1;
  std::string logPath_;
  int status_ = -1;
  bool reaped_ = false;
};

// A temporary directory removed at destruction.
struct TempDir {
  TempDir();
  ~TempDir();
  std::string path;
};

}  // namespace xrc::tools
