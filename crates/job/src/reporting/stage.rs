//! The stages of a run, named once for the probes that see them end, their timings in the
//! summary, the progress display and the failpoints after them.

/// A stage of a run, in the order a run goes through them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Reading, parsing, normalising, segmenting and signing.
    ReadAndSign,
    /// Repeated ids and exact duplicates.
    IdsAndExact,
    /// Bucket records and their reduction to candidates.
    Buckets,
    /// Verifying candidates.
    Verify,
    /// Connected components and cluster assignment.
    Cluster,
    /// Writing `documents/` and the markers.
    Writing,
    /// The run is over.
    Done,
}

impl Stage {
    /// Every stage, in order.
    pub const ALL: [Stage; 7] = [
        Stage::ReadAndSign,
        Stage::IdsAndExact,
        Stage::Buckets,
        Stage::Verify,
        Stage::Cluster,
        Stage::Writing,
        Stage::Done,
    ];

    /// The stages of the dataflow whose end a probe sees, in order.
    pub const PROBED: [Stage; 5] =
        [Stage::ReadAndSign, Stage::IdsAndExact, Stage::Buckets, Stage::Verify, Stage::Cluster];

    /// What a progress display and the log call it.
    pub fn name(self) -> &'static str {
        match self {
            Stage::ReadAndSign => "reading and signing",
            Stage::IdsAndExact => "ids and exact duplicates",
            Stage::Buckets => "buckets",
            Stage::Verify => "verifying",
            Stage::Cluster => "clustering",
            Stage::Writing => "writing",
            Stage::Done => "done",
        }
    }

    /// The failpoint hit once the stage is done (`neardup_io::failpoint`), e.g.
    /// `after-reading-and-signing`.
    pub fn failpoint(self) -> String {
        format!("after-{}", self.name().replace(' ', "-"))
    }

    /// The position of the stage in [`Stage::ALL`].
    pub fn position(self) -> usize {
        self as usize
    }

    /// The stage at `position` in [`Stage::ALL`], the last one past the end.
    pub fn at(position: usize) -> Stage {
        Stage::ALL[position.min(Stage::ALL.len() - 1)]
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One value per probed stage ([`Stage::PROBED`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct PerStage<T>([T; 5]);

impl<T> PerStage<T> {
    /// The value of a probed stage.
    ///
    /// # Panics
    /// For a stage that is not probed.
    pub(crate) fn get(&self, stage: Stage) -> &T {
        &self.0[Self::slot(stage)]
    }

    /// The value of a probed stage, to change.
    ///
    /// # Panics
    /// For a stage that is not probed.
    pub(crate) fn get_mut(&mut self, stage: Stage) -> &mut T {
        &mut self.0[Self::slot(stage)]
    }

    fn slot(stage: Stage) -> usize {
        assert!(Stage::PROBED.contains(&stage), "stage {stage} has no probe");
        stage.position()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_are_in_order_and_named_once() {
        for (position, stage) in Stage::ALL.into_iter().enumerate() {
            assert_eq!(stage.position(), position);
            assert_eq!(Stage::at(position), stage);
        }
        assert_eq!(Stage::at(99), Stage::Done);
        assert_eq!(&Stage::ALL[..5], &Stage::PROBED);
        let mut names: Vec<_> = Stage::ALL.iter().map(|s| s.name()).collect();
        names.dedup();
        assert_eq!(names.len(), Stage::ALL.len());
        assert_eq!(Stage::ReadAndSign.failpoint(), "after-reading-and-signing");
        assert_eq!(Stage::IdsAndExact.failpoint(), "after-ids-and-exact-duplicates");
    }

    #[test]
    fn per_stage_values_are_found_by_stage() {
        let mut seen = PerStage::<Option<f64>>::default();
        *seen.get_mut(Stage::Verify) = Some(2.0);
        assert_eq!(*seen.get(Stage::Verify), Some(2.0));
        assert_eq!(*seen.get(Stage::Buckets), None);
    }

    #[test]
    #[should_panic(expected = "has no probe")]
    fn unprobed_stages_have_no_value() {
        PerStage::<u8>::default().get(Stage::Writing);
    }
}
