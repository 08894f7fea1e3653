/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * demangle.h - the names shown for mangled symbols: C++ as c++filt prints
 * them, through libiberty's cplus_demangle_v3() (the Itanium C++ ABI, section
 * 5.1 "External Names"); Rust's, of both its schemes (legacy, which is
 * C++'s with a hash as the last part, and v0, "_R..."), as perf and Rust's
 * own backtraces print them, through libiberty's rust_demangle().
 */
#ifndef BPFPROF_DEMANGLE_H
#define BPFPROF_DEMANGLE_H

#include <stddef.h>

/*
 * The demangled form of the first @len bytes of @name, when they are a
 * mangled name of a function or object:
 *   - C++ ("_Z..."): e.g. "v8::internal::JsonParser<unsigned char>::
 *     ParseJsonValue<false>(v8::internal::Handle<v8::internal::Object>)
 *     [clone .isra.0]", with the parameters and qualifiers, as `c++filt`
 *     and `perf report -v` show it (c++filt spells out the standard
 *     library's abbreviations, e.g. std::basic_string<char,
 *     std::char_traits<char>, std::allocator<char> > for std::string; this
 *     keeps them short, as gdb does);
 *   - Rust legacy ("_ZN...17h<16 hex digits>E"): without the hash, e.g.
 *     "std::rt::lang_start::{{closure}}" (c++filt keeps the hash:
 *     "...::{{closure}}::h0123456789abcdef");
 *   - Rust v0 ("_R..."): without the crates' disambiguators, e.g.
 *     "<rsburn::Lcg as rsburn::Step>::step_many" (c++filt writes
 *     "rsburn[1a2b3c]::...").
 * Returns a malloc()ed string the caller frees, or NULL (show @name as it
 * is) when @name is not such a name, not a valid one, or memory ran out.
 * Other names are never demangled: a demangler of types would read "i" as
 * the type int.
 */
char *demangle_symbol(const char *name, size_t len);

#endif /* BPFPROF_DEMANGLE_H */
