#include "subprocess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace swarmfield::testing {

Subprocess::Subprocess(std::vector<std::string> argv, std::string log_path, std::vector<std::string> extra_env)
    : log_path_(std::move(log_path)) {
  for (const auto& a : argv) command_line_ += (command_line_.empty() ? "" : " ") + a;
  if (argv.empty()) return;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  for (auto& e : extra_env) env_strings.push_back(e);
  std::vector<char*> env;
  for (auto& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), env.data()) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&actions);
}

Subprocess::~Subprocess() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
}

void Subprocess::signal(int sig) const noexcept {
  if (pid_ > 0 && !status_) ::kill(pid_, sig);
}

std::optional<int> Subprocess::wait_for(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  if (pid_ <= 0) return std::nullopt;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int st = 0;
    const pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      return status_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool Subprocess::running() { return pid_ > 0 && !wait_for(std::chrono::milliseconds(0)); }

std::string Subprocess::log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Subprocess::log_tail(std::size_t max_lines) const {
  std::istringstream in(log());
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  const std::size_t first = lines.size() > max_lines ? lines.size() - max_lines : 0;
  std::string out = "---- " + command_line_ + "\n     (log " + log_path_ + ", " + std::to_string(lines.size()) +
                    " lines, showing the last " + std::to_string(lines.size() - first) + ")\n";
  for (std::size_t i = first; i < lines.size(); ++i) out += lines[i] + "\n";
  return out + "----";
}

bool Subprocess::wait_for_log(const std::string& needle, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (log().find(needle) != std::string::npos) return true;
    if (!running()) return log().find(needle) != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string last_line_starting_with(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line, found;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) found = line;
  }
  return found;
}

std::string last_line_containing(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  std::string line, found;
  while (std::getline(in, line)) {
    if (line.find(needle) != std::string::npos) found = line;
  }
  return found;
}

}  // namespace swarmfield::testing
