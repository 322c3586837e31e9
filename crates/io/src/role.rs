//! The roles of the folders a run writes.

use serde::{Deserialize, Serialize};

/// What a folder neardup writes holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A run's outputs (`--output`): `documents/`, `pairs/`, `summary.json`, ...
    Output,
    /// A kept dataset (`--write-kept`): the kept records in their input format.
    Kept,
    /// An index of earlier runs (`--index`).
    Index,
}

impl Role {
    /// The flag that names a folder of this role.
    pub fn flag(self) -> &'static str {
        match self {
            Role::Output => "--output",
            Role::Kept => "--write-kept",
            Role::Index => "--index",
        }
    }

    /// What a folder of this role holds, for messages.
    pub fn holds(self) -> &'static str {
        match self {
            Role::Output => "the outputs of a run",
            Role::Kept => "the kept dataset of a run",
            Role::Index => "an index of runs",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Role::Output => "output",
            Role::Kept => "kept",
            Role::Index => "index",
        })
    }
}
