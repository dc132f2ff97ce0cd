#pragma once
// A command-line parse error of any swarmfield program as one sentence that says what to fix.
// CLI11 2.1 says "The following arguments were not expected: 5 --agnets" (the words in reverse
// order, the mistyped option and its value mixed) and "--agents: At Most 1 required but
// received 2". Here: "unknown option '--agnets' (did you mean '--agents'?)" and "--agents is
// given 2 times; give it once". Header-only, so only the programs depend on CLI11.
#include <CLI/CLI.hpp>

#include "swarmfield/cli/control_chars.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace swarmfield::cli {

/// A word of the command line as it may be echoed: control characters and bytes beyond ASCII as
/// '?' (an escape sequence in an option name cleared the terminal), at most 60 characters.
inline std::string printable_argument(const std::string& word) {
  std::string out = printable_ascii(word.size() > 60 ? word.substr(0, 57) : word);
  if (word.size() > 60) out += "...";
  return out;
}

namespace parse_error_detail {

/// A bound of CLI11's range as a person writes it: CLI11 prints a floating-point range with
/// std::to_string ("--seconds must be in 0.000000..10000000.000000"); that becomes "0..10000000".
/// Anything that is not a plain decimal number is kept as it is.
inline std::string range_bound(const std::string& text) {
  double v = 0.0;
  const char* const last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(text.data(), last, v);
  if (text.find('.') == std::string::npos || ec != std::errc() || end != last || !std::isfinite(v)) return text;
  char out[32];
  std::snprintf(out, sizeof out, "%.15g", v);
  return out;
}

/// Edit distance of a and b with adjacent transpositions counted as one edit (optimal string
/// alignment): "--fier" is one edit from "--fire", two from "--view". Option names: a few
/// dozen characters.
inline std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

/// The long option of `app` nearest to `word` ("--agnets"): within 2 edits, or a longer option
/// that `word` begins, at least 4 letters of it ("--tick" for "--ticks"); the first listed of
/// equally near ones; empty when none is near.
inline std::string nearest_option(const CLI::App& app, const std::string& word) {
  std::string best;
  std::size_t best_distance = 3;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& lname : opt->get_lnames()) {
      const std::string name = "--" + lname;
      std::size_t d = edit_distance(word, name);
      if (word.size() >= 6 && name.compare(0, word.size(), word) == 0) d = std::min<std::size_t>(d, 1);
      if (d < best_distance) {
        best_distance = d;
        best = name;
      }
    }
  }
  return best;
}

/// The apps from `app` down to the subcommand the parse reached.
inline std::vector<const CLI::App*> app_chain(const CLI::App& app) {
  std::vector<const CLI::App*> chain{&app};
  for (;;) {
    const std::vector<const CLI::App*> given =
        chain.back()->get_subcommands([](const CLI::App* s) { return s->parsed(); });
    if (given.empty()) return chain;
    chain.push_back(given.front());
  }
}

/// The words of `extras` (one app's leftovers, in order) described; `deeper` the subcommands
/// given after this app (an option of theirs given before them is pointed there).
inline std::string describe_extras(const CLI::App& at, const std::vector<std::string>& extras,
                                   const std::vector<const CLI::App*>& deeper) {
  std::string out;
  bool after_unknown_option = false;  // the word after an unknown option is taken as its value
  bool after_separator = false;       // after "--" every word is a plain argument
  for (const std::string& word : extras) {
    std::string part;
    if (word == "--") {
      after_separator = true;
      continue;
    }
    if (word.size() > 1 && word[0] == '-') {
      const std::string name = word.substr(0, word.find('='));
      part = "unknown option '" + printable_argument(name) + "'";
      if (name.size() > 2 && name[1] == '-') {
        const auto has_it = [&](const CLI::App* sub) { return sub->get_option_no_throw(name) != nullptr; };
        const auto owner = std::find_if(deeper.begin(), deeper.end(), has_it);
        if (at.get_option_no_throw(name) != nullptr) {
          part = "'" + printable_argument(name) + "' is not taken here" +
                 (after_separator ? std::string(" (after '--' every word is a plain argument)") : std::string());
        } else if (owner != deeper.end()) {
          const std::string sub = printable_argument((*owner)->get_name());
          part += " (an option of '" + sub + "': give it after '" + sub + "')";
        } else if (const std::string near = nearest_option(at, name); !near.empty()) {
          part += " (did you mean '" + near + "'?)";
        }
      }
      after_unknown_option = word.find('=') == std::string::npos;
    } else if (after_unknown_option) {
      after_unknown_option = false;
      continue;
    } else {
      part = "unexpected argument '" + printable_argument(word) + "'";
    }
    out += (out.empty() ? "" : "; ") + part;
  }
  return out;
}

}  // namespace parse_error_detail

/// What went wrong with the command line `app` just failed to parse (`e`), as one sentence
/// without the "error: " prefix or a pointer to --help (the caller adds those). Words of the
/// command line are echoed through printable_argument().
///  - arguments nobody takes (also when CLI11 reports another error first, as an unknown
///    option's value taken for a positional argument): each unknown option named in the order
///    given, its value left out, with the subcommand it belongs to when it came before it, else
///    the nearest option of its (sub)command within two edits ("did you mean"); an option after
///    "--" as not taken there; a stray positional word as "unexpected argument 'x'";
///  - an option given more often than it takes: "--agents is given 2 times; give it once";
///  - a flag given a value it can not take: "--headless is a flag: ...";
///  - a value out of a CLI::Range: "--port must be in 1..65535 (got 99999)";
///  - anything else: CLI11's own message, printable and at most 300 characters.
inline std::string describe_parse_error(const CLI::App& app, const CLI::ParseError& e) {
  using namespace parse_error_detail;
  // Unknown options are the first thing to fix whatever CLI11 threw: an option's value may have
  // been taken as a positional argument and raised another error ("--tick 5": MAP '5').
  const std::vector<const CLI::App*> chain = app_chain(app);
  std::string extras;
  bool unknown_option = false;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    const std::vector<std::string> words = chain[i]->remaining();
    unknown_option = unknown_option || std::any_of(words.begin(), words.end(), [](const std::string& w) {
                       return w.size() > 1 && w[0] == '-';
                     });
    const std::vector<const CLI::App*> deeper(chain.begin() + static_cast<std::ptrdiff_t>(i) + 1, chain.end());
    const std::string part = describe_extras(*chain[i], words, deeper);
    if (!part.empty()) extras += (extras.empty() ? "" : "; ") + part;
  }
  if (!extras.empty() && (unknown_option || dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr)) return extras;
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    // "--agents: At Most 1 required but received 2"
    const std::string marker = ": At Most 1 required but received ";
    const std::size_t pos = what.find(marker);
    if (pos != std::string::npos) {
      return printable_argument(what.substr(0, pos)) + " is given " + what.substr(pos + marker.size()) +
             " times; give it once";
    }
  }
  // "Could not convert: --headless = nope": a flag given a value it can not take.
  if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr) {
    constexpr std::string_view kPrefix = "Could not convert: ";
    const std::size_t eq = what.find(" = ");
    if (what.rfind(kPrefix, 0) == 0 && eq != std::string::npos) {
      const std::string name = what.substr(kPrefix.size(), eq - kPrefix.size());
      const std::string value = what.substr(eq + 3);
      const CLI::Option* opt = nullptr;
      for (const CLI::App* level : chain) {
        if (opt == nullptr) opt = level->get_option_no_throw(name);
      }
      if (opt != nullptr && opt->get_expected_max() == 0) {
        return printable_argument(name) + " is a flag: give it alone, or =true/=false (got '" +
               printable_argument(value) + "')";
      }
      return printable_argument(name) + ": '" + printable_argument(value) + "' is not a value it takes";
    }
  }
  // "--port: Value 99999 not in range 1 to 65535" (CLI::Range), as the server words a range.
  {
    constexpr std::string_view kValue = ": Value ", kRange = " not in range ", kTo = " to ";
    const std::size_t at = what.find(kValue);
    const std::size_t in = what.find(kRange);
    const std::size_t to = what.find(kTo, in == std::string::npos ? 0 : in);
    if (at != std::string::npos && in != std::string::npos && to != std::string::npos && at < in) {
      const std::string value = what.substr(at + kValue.size(), in - at - kValue.size());
      const std::string low = what.substr(in + kRange.size(), to - in - kRange.size());
      const std::string high = what.substr(to + kTo.size());
      return printable_argument(what.substr(0, at)) + " must be in " + printable_argument(range_bound(low)) + ".." +
             printable_argument(range_bound(high)) + " (got " + printable_argument(value) + ")";
    }
  }
  // CLI11's own text, which may echo a value: printable, and not a 100 kB line.
  std::string shown_what = printable_ascii(what);
  if (shown_what.size() > 300) shown_what = shown_what.substr(0, 297) + "...";
  return shown_what;
}

}  // namespace swarmfield::cli
