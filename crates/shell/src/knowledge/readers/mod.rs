//! Readers for programs whose argument language is richer than options and
//! operands, one file per family: `git`, `find`, `sed`, `awk`, archives,
//! network tools, interactive tools (editors, debuggers, database shells),
//! and runners (interpreters, builds, package managers, containers).

use super::{Findings, ProgramSpec, generic, join, split};
use crate::model::{Effect, OpaqueReason};
use crate::word::Word;

mod archives;
mod awk;
mod curl;
mod find;
mod git;
mod interactive;
mod network;
mod runners;
mod sed;

pub(super) use archives::*;
pub(super) use awk::*;
pub(super) use curl::*;
pub(super) use find::*;
pub(super) use git::*;
pub(super) use interactive::*;
pub(super) use network::*;
pub(super) use runners::*;
pub(super) use sed::*;
