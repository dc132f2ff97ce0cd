#pragma once
// What a request head declares about its body, for the operations port's waiting room and its
// handlers (operations_http.cpp): which bodies httplib reads, which can be waited for whole, how
// many bytes a head still owes. Internal to server/app/src/ops.
#include <httplib.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace swarmfield::server::http_rules {

/// Largest request body read (to answer 405 or 404 after it, see OperationsHttp::start()).
inline constexpr std::size_t kMaxBodyBytes = 1024;

/// A method whose declared body httplib reads before it routes the request: POST, PUT, PATCH, DELETE.
[[nodiscard]] bool method_reads_body(std::string_view method) noexcept;

/// A POST, PUT, PATCH or DELETE that declares a body (a Transfer-Encoding, or a Content-Length
/// other than "0"): httplib reads it before it routes the request.
[[nodiscard]] bool has_body_to_read(const httplib::Request& req);

/// A Content-Length value as a length: digits only (RFC 9110), nullopt otherwise; a number past 64
/// bits is UINT64_MAX. httplib 0.11 takes a value's leading digits with strtoull ("+900", "900x",
/// "-1" as 2^64 - 1).
[[nodiscard]] std::optional<std::uint64_t> content_length_value(std::string_view value) noexcept;

/// A request whose body httplib would read (has_body_to_read) though it can not be waited for
/// whole: a Content-Length over kMaxBodyBytes (413), one that is not a plain number or two that
/// differ (400: RFC 9112 section 6.3, the framing is unknowable), a Transfer-Encoding (chunked:
/// its length is known only at its last chunk). httplib 0.11 reads
/// such a body to its end, skipping what is over its limit, before it answers: a worker waited on
/// the peer up to the request deadline, and a few addresses trickling such bodies held them all
/// (/healthz unanswered). 0 when the request is not one of these.
[[nodiscard]] int body_refused_unread(const httplib::Request& req);

/// The body bytes a request head (request line and headers, up to its blank line) declares that a
/// worker will read: a Content-Length of 1..kMaxBodyBytes on a method whose body httplib reads
/// (method_reads_body), the first such header as httplib takes it. 0 otherwise: no body, or one
/// refused unread (body_refused_unread: chunked, over the limit, not a number).
[[nodiscard]] std::size_t declared_body_bytes(std::string_view head);

/// An HTTP method token (RFC 9110 tchar): one httplib's request-line parser may have refused only
/// for being unknown to it.
[[nodiscard]] bool is_method_token(std::string_view text) noexcept;

}  // namespace swarmfield::server::http_rules
