// SPDX-License-Identifier: BSD-2-Clause
//! rsburn - a Rust workload whose profile is known in advance, for the
//! names profiles give Rust functions, under both of rustc's symbol
//! manglings (legacy, and v0 with `-C symbol-mangling-version=v0`): a
//! function in a module, a trait method's implementation, and a method of
//! a generic type.
//! It follows /work/shared/notes/ground-truth-workloads.md the way
//! groundtruth.h does for the C workloads: every hot function runs the
//! same serial LCG loop, shares are set by iteration counts, and chunk
//! lengths are drawn pseudo-randomly (xorshift) so that the schedule
//! cannot phase-lock to the sampling timer.
//!
//! Each round draws a chunk length L in [2000, 6000) and spends
//!
//!   5 L iterations in rsburn::outer::inner_a                     50%
//!   3 L iterations in <rsburn::Lcg as rsburn::Step>::step_many   30%
//!   2 L iterations in Work<u32>::run                             20%
//!
//! each called from rsburn::round, called from rsburn::main.  The names
//! are those `--truth` prints for the mangling the binary was built with
//! (the generic one is rsburn::Work<T>::run in legacy names, which have no
//! type arguments, and <rsburn::Work<u32>>::run in v0 ones); perf and
//! Rust's backtraces print the same, without the legacy hash.
//!
//! Usage: rsburn [-s SECONDS] [--truth]
//!   -s SECONDS  seconds of work (default 2): rounds until then
//!   --truth     print "share NAME FRACTION" lines and exit
use std::time::{Duration, Instant};

const LCG_MUL: u64 = 6364136223846793005;
const LCG_ADD: u64 = 1442695040888963407;

/// @x, through memory the optimizer cannot see through (std::hint::
/// black_box is Rust 1.66+; Debian 12's rustc is 1.63).
pub fn black_box(x: u64) -> u64 {
    // SAFETY: a read of a local the function owns
    unsafe { std::ptr::read_volatile(&x) }
}

/// The loop body of every hot function: @n serial LCG steps on @x.
macro_rules! lcg_steps {
    ($x:ident, $n:expr) => {
        for _ in 0..$n {
            $x = $x.wrapping_mul($crate::LCG_MUL).wrapping_add($crate::LCG_ADD);
        }
    };
}

mod outer {
    #[inline(never)]
    pub fn inner_a(mut x: u64, n: u64) -> u64 {
        lcg_steps!(x, n);
        crate::black_box(x)
    }
}

trait Step {
    fn step_many(&self, x: u64, n: u64) -> u64;
}

struct Lcg;

impl Step for Lcg {
    #[inline(never)]
    fn step_many(&self, mut x: u64, n: u64) -> u64 {
        lcg_steps!(x, n);
        black_box(x)
    }
}

struct Work<T>(std::marker::PhantomData<T>);

impl<T> Work<T> {
    #[inline(never)]
    fn run(mut x: u64, n: u64) -> u64 {
        lcg_steps!(x, n);
        black_box(x)
    }
}

/// One round: the three functions, 5:3:2, in chunks of @len iterations.
#[inline(never)]
fn round(x: u64, len: u64) -> u64 {
    let x = outer::inner_a(x, 5 * len) + 1;
    let x = Lcg.step_many(x, 3 * len) + 1;
    Work::<u32>::run(x, 2 * len) + 1
}

fn truth() {
    // the Makefile says which mangling it asked rustc for
    let v0 = option_env!("RSBURN_MANGLING") == Some("v0");
    let generic = if v0 { "<rsburn::Work<u32>>::run" } else { "rsburn::Work<T>::run" };
    println!("share rsburn::outer::inner_a 0.500000");
    println!("share <rsburn::Lcg as rsburn::Step>::step_many 0.300000");
    println!("share {} 0.200000", generic);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut seconds = 2.0f64;
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--truth" => return truth(),
            "-s" if i + 1 < args.len() => {
                seconds = args[i + 1].parse().unwrap_or(2.0);
                i += 1;
            }
            _ => {
                eprintln!("usage: rsburn [-s SECONDS] [--truth]");
                std::process::exit(2);
            }
        }
        i += 1;
    }
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    let (mut x, mut rnd, mut rounds) = (1u64, 0x9e3779b97f4a7c15u64, 0u64);
    while Instant::now() < end {
        for _ in 0..64 {
            rnd ^= rnd << 13;
            rnd ^= rnd >> 7;
            rnd ^= rnd << 17;
            x = round(x, 2000 + rnd % 4000);
        }
        rounds += 64;
    }
    eprintln!("rsburn: rounds={} result={}", rounds, black_box(x) & 1);
}
