/*!
 * \file sha256.h
 * \brief SHA-256 (FIPS 180-4), for the program cache's keys and checksums: the same digests as
 *        Python's hashlib, so the cache follows dlarray._cache's conventions exactly.
 */
#ifndef DLARRAY_BACKENDS_OPENCL_SHA256_H_
#define DLARRAY_BACKENDS_OPENCL_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace dlarray::opencl {

/*! \brief An incremental SHA-256. */
class Sha256 {
 public:
  Sha256();
  /*! \brief Adds n bytes. */
  void update(const void* data, size_t n);
  /*! \brief Adds a string's bytes. */
  void update(const std::string& s) { update(s.data(), s.size()); }
  /*! \brief The digest as 64 lowercase hex digits (the object is spent afterwards). */
  std::string hexdigest();

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  uint8_t buf_[64];
  size_t buffered_ = 0;
  uint64_t total_ = 0;
};

/*! \brief SHA-256 of a byte string, as hex. */
std::string Sha256Hex(const std::string& data);

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_SHA256_H_
