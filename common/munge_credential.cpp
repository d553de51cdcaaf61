#include "common/munge_credential.h"

#include <munge.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace ff::munge_credential {
namespace {

struct ContextDeleter {
  void operator()(munge_ctx_t ctx) const { munge_ctx_destroy(ctx); }
};
using Context = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, ContextDeleter>;

Context make_context(const std::string& socket) {
  Context ctx(munge_ctx_create());
  if (!ctx) throw std::runtime_error("munge: cannot create a context (out of memory)");
  if (!socket.empty() && munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, socket.c_str()) != 0)
    throw std::runtime_error("munge: cannot set socket " + socket);
  return ctx;
}

std::string context_message(munge_ctx_t ctx, munge_err_t err) {
  const char* text = munge_ctx_strerror(ctx);
  return text ? text : munge_strerror(err);
}

DecodeError classify(munge_err_t err) {
  switch (err) {
    case EMUNGE_SUCCESS:
      return DecodeError::none;
    case EMUNGE_CRED_EXPIRED:
    case EMUNGE_CRED_REWOUND:
      return DecodeError::expired;
    case EMUNGE_CRED_REPLAYED:
      return DecodeError::replayed;
    case EMUNGE_BAD_ARG:
    case EMUNGE_BAD_LENGTH:
    case EMUNGE_BAD_CRED:
    case EMUNGE_BAD_VERSION:
    case EMUNGE_BAD_CIPHER:
    case EMUNGE_BAD_MAC:
    case EMUNGE_BAD_ZIP:
    case EMUNGE_BAD_REALM:
    case EMUNGE_CRED_INVALID:
    case EMUNGE_CRED_UNAUTHORIZED:
      return DecodeError::invalid;
    default:
      return DecodeError::other;
  }
}

}  // namespace

std::string encode(const std::string& payload, const std::string& socket) {
  Context ctx = make_context(socket);
  char* cred = nullptr;
  munge_err_t err =
      munge_encode(&cred, ctx.get(), payload.data(), static_cast<int>(payload.size()));
  if (err != EMUNGE_SUCCESS) {
    std::free(cred);
    throw std::runtime_error("munge encode: " + context_message(ctx.get(), err));
  }
  std::string out(cred);
  std::free(cred);
  return out;
}

DecodeResult decode(const std::string& credential, const std::string& socket) {
  DecodeResult result;
  if (credential.empty()) {
    result.error = DecodeError::missing;
    result.message = "no credential";
    return result;
  }
  Context ctx = make_context(socket);
  void* data = nullptr;
  int len = 0;
  munge_err_t err =
      munge_decode(credential.c_str(), ctx.get(), &data, &len, &result.uid, &result.gid);
  // For expired/replayed credentials munge still returns the payload and ids;
  // they are kept for logging, but `ok` stays false.
  if (data) result.payload.assign(static_cast<const char*>(data), static_cast<std::size_t>(len));
  std::free(data);
  result.error = classify(err);
  result.ok = err == EMUNGE_SUCCESS;
  if (!result.ok) result.message = context_message(ctx.get(), err);
  return result;
}

const char* error_name(DecodeError error) {
  switch (error) {
    case DecodeError::none:
      return "none";
    case DecodeError::missing:
      return "missing";
    case DecodeError::invalid:
      return "invalid";
    case DecodeError::expired:
      return "expired";
    case DecodeError::replayed:
      return "replayed";
    case DecodeError::other:
      return "other";
  }
  return "other";
}

}  // namespace ff::munge_credential
