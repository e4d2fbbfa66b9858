//! Drafting and auto's choices, on token histories and timings made up for each case.

use super::*;

#[test]
fn the_longest_most_recent_match_gives_what_followed_it() {
    // "1 2 3" occurs twice; the later copy is followed by 7 8.
    let h = [1, 2, 3, 4, 5, 9, 1, 2, 3, 7, 8, 0, 1, 2, 3];
    assert_eq!(find_draft(&h, 2), vec![7, 8]);
    assert_eq!(find_draft(&h, 1), vec![7]);
    // A 4-token match beats a more recent 2-token one.
    let h = [5, 6, 7, 8, 1, 2, 0, 7, 8, 3, 5, 6, 7, 8];
    assert_eq!(find_draft(&h, 3), vec![1, 2, 0]);
}

#[test]
fn no_draft_without_an_earlier_match_of_two_tokens() {
    assert!(find_draft(&[1, 2, 3, 4, 5], 4).is_empty());
    // A single shared token is not enough.
    assert!(find_draft(&[1, 9, 2, 1], 4).is_empty());
    assert!(find_draft::<i32>(&[], 4).is_empty());
    assert!(find_draft(&[1, 2, 1, 2], 0).is_empty());
}

#[test]
fn a_draft_stops_at_the_end_of_the_history() {
    // The earlier copy of "1 2" is followed by only "1 2" before the suffix.
    assert_eq!(find_draft(&[1, 2, 1, 2], 8), vec![1, 2]);
}

#[test]
fn off_never_drafts_and_on_keeps_its_length() {
    let h = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2];
    let mut off = Drafter::new(LookupMode::Off);
    assert!(off.draft(&h, 8).is_empty());
    let mut on = Drafter::new(LookupMode::On);
    for _ in 0..5 {
        assert_eq!(on.draft(&h, 8).len(), ON_DRAFT);
        on.record(ON_DRAFT, 0, 100.0);
    }
    assert_eq!(on.draft(&h, 3).len(), 3, "room bounds the draft");
    assert_eq!((on.drafted, on.accepted, on.verifies), (20, 0, 5));
}

#[test]
fn of_several_occurrences_the_longest_copy_wins() {
    // The tail copies `src` from its start; its last 4 tokens also occur, more
    // recently, after an unrelated token.
    let src: Vec<i32> = (100..130).collect();
    let mut h = src.clone();
    h.extend([7, 120, 121, 122, 123, 5]);
    h.extend(&src[..24]);
    let m = find_match(&h, 3).unwrap();
    assert_eq!(m.draft, vec![124, 125, 126]);
    assert_eq!(m.run, 24, "the whole copied stretch");
    // Equal runs: the most recent.
    let h = [1, 2, 3, 4, 5, 9, 1, 2, 3, 7, 8, 0, 1, 2, 3];
    assert_eq!(
        find_match(&h, 2).unwrap(),
        Match {
            draft: vec![7, 8],
            run: 3
        }
    );
    // Runs stop at RUN_CAP.
    let long: Vec<i32> = (0..100).chain(0..90).collect();
    assert_eq!(find_match(&long, 1).unwrap().run, RUN_CAP);
}

#[test]
fn a_resumed_drafter_drafts_from_the_first_step_on_earlier_timings() {
    let h = repeating();
    let mut first = Drafter::new(LookupMode::Auto);
    assert!(
        first.draft(&h, 100).is_empty(),
        "a new drafter times one row first"
    );
    first.record(0, 0, 10.0);
    let k = first.draft(&h, 100).len();
    assert!(k > 0);
    first.record(k, k, 10.0 + 2.0 * k as f64);
    let timings = first.timings();
    assert_eq!(timings[0], Some(10.0));
    assert!(timings[k].is_some());
    let mut next = Drafter::resume(LookupMode::Auto, timings);
    assert!(
        !next.draft(&h, 100).is_empty(),
        "no plain decode to time a row again"
    );
    assert_eq!(
        next.acceptance(),
        Drafter::new(LookupMode::Auto).acceptance()
    );
    // Rows that cost too much are not drafted by the next reply either.
    let mut dear = [None; MAX_DRAFT + 1];
    dear.iter_mut()
        .enumerate()
        .for_each(|(k, t)| *t = Some(10.0 * (1.0 + 2.0 * k as f64)));
    assert!(Drafter::resume(LookupMode::Auto, dear)
        .draft(&h, 100)
        .is_empty());
}

#[test]
fn long_runs_are_drafted_on_their_own_estimate_even_while_short_ones_pause() {
    let short = repeating();
    let long: Vec<i32> = (0..40).chain(0..20).collect();
    let mut d = Drafter::new(LookupMode::Auto);
    d.draft(&short, 100);
    d.record(0, 0, 10.0);
    // Short matches fail until auto pauses them.
    for _ in 0..10 {
        let k = d.draft(&short, 100).len();
        if k == 0 {
            break;
        }
        d.record(k, 0, 10.0 + 2.0 * k as f64);
    }
    assert!(d.draft(&short, 100).is_empty(), "short matches paused");
    let before = d.acceptance();
    // A long run is drafted anyway, and long drafts that are kept keep it long.
    let k = d.draft(&long, 100).len();
    assert!(k > 0);
    d.record(k, k, 10.0 + 2.0 * k as f64);
    assert!(d.long_acceptance() > LONG_PRIOR);
    assert_eq!(d.acceptance(), before, "short estimate untouched");
    // Long drafts that fail stop too.
    for _ in 0..20 {
        let k = d.draft(&long, 100).len();
        if k == 0 {
            break;
        }
        d.record(k, 0, 10.0 + 2.0 * k as f64);
    }
    assert!(d.long_acceptance() < 0.5);
    assert_eq!(d.best_k_for(d.long_acceptance()), 0);
}

/// A history where every suffix has a long match.
fn repeating() -> Vec<i32> {
    (0..40).chain(0..2).collect()
}

#[test]
fn auto_times_a_plain_decode_first_then_drafts_when_rows_are_cheap() {
    let h = repeating();
    let mut d = Drafter::new(LookupMode::Auto);
    assert!(d.draft(&h, 100).is_empty(), "the first decode is plain");
    d.record(0, 0, 10.0);
    let first = d.draft(&h, 100);
    assert!(!first.is_empty());
    // Rows cost 10 % of a decode and every draft is accepted: the longest draft.
    for _ in 0..10 {
        let k = d.draft(&h, 100).len();
        d.record(k, k, 10.0 + k as f64);
    }
    assert_eq!(d.draft(&h, 100).len(), MAX_DRAFT);
    assert!(d.acceptance() > 0.9);
}

#[test]
fn auto_stops_drafting_when_it_does_not_pay_and_tries_again_later() {
    let h = repeating();
    let mut d = Drafter::new(LookupMode::Auto);
    d.draft(&h, 100);
    d.record(0, 0, 10.0);
    // Every draft rejected, each row costing a fifth of a decode.
    let mut steps = 0;
    loop {
        let k = d.draft(&h, 100).len();
        if k == 0 {
            break;
        }
        d.record(k, 0, 10.0 + 2.0 * k as f64);
        steps += 1;
        assert!(steps < 10, "auto keeps drafting drafts that all fail");
    }
    // Paused: plain decodes for a while, then a new try; each failed try doubles
    // the pause, and a kept token ends the doubling.
    let pause = |d: &mut Drafter| {
        let mut steps = 0;
        while d.draft(&h, 100).is_empty() {
            d.record(0, 0, 10.0);
            steps += 1;
            assert!(steps < 1000, "auto never tries again");
        }
        steps
    };
    let first = pause(&mut d);
    assert!(
        first >= MIN_PAUSE as usize,
        "tried again after {first} steps"
    );
    d.record(2, 0, 14.0);
    let second = pause(&mut d);
    assert!(second > first, "{second} after {first}");
    d.record(2, 1, 14.0);
    let k = d.draft(&h, 100).len();
    d.record(k, 0, 10.0 + 2.0 * k as f64);
    let third = pause(&mut d);
    assert!(third < second, "{third} after {second}");
}

#[test]
fn expensive_rows_need_high_acceptance() {
    let h = repeating();
    let mut d = Drafter::new(LookupMode::Auto);
    d.draft(&h, 100);
    d.record(0, 0, 10.0);
    // Rows as dear as a whole decode: half-accepted drafts never pay.
    for _ in 0..20 {
        let k = d.draft(&h, 100).len();
        if k == 0 {
            d.record(0, 0, 10.0);
            continue;
        }
        d.record(k, k / 2, 10.0 + 10.0 * k as f64);
    }
    assert!(d.cost(1) > 1.9);
    assert_eq!(d.best_k(), 0);
}

#[test]
fn untimed_sizes_are_read_off_the_timed_ones() {
    let mut d = Drafter::new(LookupMode::Auto);
    assert_eq!(d.cost(4), 1.0 + 4.0 * PRIOR_ROW_COST, "nothing timed yet");
    d.record(0, 0, 10.0);
    d.record(2, 1, 20.0);
    d.record(6, 1, 40.0);
    assert_eq!(d.cost(0), 1.0);
    assert_eq!(d.cost(2), 2.0);
    assert_eq!(d.cost(1), 1.5, "between 0 and 2");
    assert_eq!(d.cost(4), 3.0, "between 2 and 6");
    assert_eq!(d.cost(8), 4.0 + 2.0 * PRIOR_ROW_COST, "beyond 6");
    let mut cheap = Drafter::new(LookupMode::Auto);
    cheap.record(0, 0, 10.0);
    cheap.record(4, 4, 12.0);
    assert!(
        (cheap.cost(8) - 1.4).abs() < 1e-9,
        "the timed size's own slope"
    );
}
