//! The settings of the node law's rule (MODEL.md 6c f, g, j, l): how the candidate laws are
//! weighed by their out-of-sample evidence, which laws the family holds, what earns a growing
//! law its weight, and what the intervals assume where nothing measured it. [`Rule::default`]
//! holds the values the design study chose by error on codes and regimes held out of that
//! choice (`docs/NODE_AXIS.md`); `fit --design` sets others for the study ([`Rule::parse`]).

/// How the candidates' left-out errors become weights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Weighing {
    /// The single law of least root-mean-square left-out error.
    Best,
    /// `1 / (e^2 + floor^2)`, `e` a law's root-mean-square left-out error: laws whose errors
    /// differ by less than the floor weigh alike, whatever the code's own noise.
    Floor(f64),
    /// The code's own evidence: `prior x exp(-sum_m (e_m^2 - e*_m^2) / (2 (kappa s)^2))` over the
    /// left-out counts `m`, `e*` the best law's errors, `s` the code's run-to-run spread (at least
    /// the rule's `noise_floor`) or the best law's root-mean-square left-out error, the larger. Laws
    /// whose errors differ by less than the code's noise weigh alike; where the left-out counts
    /// tell them apart by several times it, they decide.
    Evidence(f64),
    /// Pseudo-BMA+ (Yao, Vehtari, Simpson and Gelman, Bayesian Analysis 2018): the evidence
    /// weights of [`Weighing::Evidence`] at this `kappa`, each left-out count's log-likelihood
    /// reweighted by a Bayesian bootstrap over the left-out counts and the weights averaged
    /// over the draws, so that they sharpen only as the independent left-out checks grow.
    PseudoBma(f64),
    /// Bayesian stacking of the laws' leave-one-count-out predictive densities (Yao, Vehtari,
    /// Simpson and Gelman, Bayesian Analysis 2018; `super::node_stack`), each a normal of
    /// spread `kappa` times the law's own root-mean-square left-out error or the code's
    /// run-to-run spread, the larger: a law weighs for what it adds to the mixture's fit of the
    /// left-out counts, not for being one of many laws alike.
    Stack(f64),
    /// As [`Weighing::Stack`], every law's density of one spread: `kappa` times the code's
    /// run-to-run spread or the best law's root-mean-square left-out error, the larger (the
    /// scale of [`Weighing::Evidence`]).
    StackPooled(f64),
}

/// Which law the model uses, judged by each law's time (or energy) at eight times the largest
/// measured count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Center {
    /// The laws' weighted mean (a weighted sum of laws is again a law).
    Mean,
    /// The law at their weighted median.
    Median,
    /// The law at their weighted median with each weight divided by the law's own value: the
    /// one of least expected relative error, were the truth one of them in their proportions
    /// (a law that is too slow errs without bound, one that is too fast by at most 100%).
    Relative,
}

impl Center {
    /// In words.
    pub fn name(self) -> &'static str {
        match self {
            Center::Mean => "their weighted mean",
            Center::Median => {
                "the weighted median of the laws left by their value at 8 times the largest \
                 measured count"
            }
            Center::Relative => {
                "the law of least expected relative error at 8 times the largest measured count \
                 (the weighted median, each weight over the law's value there)"
            }
        }
    }
}

/// The rule (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// How laws are weighed.
    pub weighing: Weighing,
    /// Whether the serial time `b` of `a/n + b` is held at `>= 0` (no superlinear term).
    pub serial_nonneg: bool,
    /// Whether the family holds the work laws that need not divide perfectly, `T0 (n0/n)^p`
    /// and `(T0 - b) (n0/n)^p + b` (`0 < p <= 1` fitted; strong scaling only).
    pub power: bool,
    /// A law with a growing term earns weight only where some left-out count is slower than
    /// every law without growth predicted it by more than this many times the code's
    /// run-to-run spread (`None`: growing laws are weighed as the others).
    pub growth_evidence: Option<f64>,
    /// The prior weight of a law with a growing term, against 1 for a law without.
    pub growth_prior: f64,
    /// A law is ruled out (weight 0, outside the intervals) where it predicted some count
    /// faster than measured by more than this many times the code's run-to-run spread beyond
    /// the law that did so least, refitted without that count or fitted on every count: the
    /// evidence refutes the favourable side of the family only (`None`: no law is ruled out
    /// this way; the design study judged `Some(2.0)` and kept `None`, docs/NODE_AXIS.md).
    pub refute: Option<f64>,
    /// The law the model uses, among the laws left.
    pub center: Center,
    /// Whether energy over node counts is judged per code, the derived energy against direct
    /// laws of `n`: which of them the model uses, and how they are weighed
    /// ([`Weighing::Evidence`] or [`Weighing::Stack`]; `None`: the derived energy alone).
    pub energy_law: Option<(Center, Weighing)>,
    /// Whether each code chooses its method by its own left-out counts: the family's law
    /// (this rule) or the single law of least left-out error of the plain reference's family
    /// (perfect division with a serial or growing time), whichever, refitted without each
    /// count beyond the anchor, predicted it better (the family with fewer than three counts
    /// beyond the anchor, where a method refitted without one is no longer itself, or where
    /// they tie). Chosen by the design study (docs/NODE_AXIS.md); `method=family` turns it
    /// off.
    pub method_choice: bool,
    /// How much better, in multiples of the code's run-to-run spread, the plain reference's
    /// root-mean-square left-out error must be than the family's for
    /// [`Rule::method_choice`] to take it: a smaller difference is one noise alone gives, and
    /// keeps the family (`methodbar=B`).
    pub method_bar: f64,
    /// Whether the plain reference's laws, where [`Rule::method_choice`] weighs the plain
    /// method, pass the same growth gate as the family's ([`Rule::growth_evidence`]): a
    /// growing law then enters through neither method without a left-out count that shows
    /// growth (`plaingrowth=gate`; `free`: the plain reference's own family, growth weighed as
    /// the rest).
    pub plain_growth_gate: bool,
    /// Whether each code with no energy law judged ([`Rule::energy_law`] `None`) chooses its
    /// energy by its own left-out counts: the derived energy, or the plain reference's direct
    /// energy law, whichever, refitted without each count beyond the anchor, predicted it
    /// better (the derived with fewer than three such counts, on a tie, or where the direct
    /// law cannot be fitted; `emethod=choose`, `emethod=derived`).
    pub energy_choice: bool,
    /// A law whose weight is below this share of the heaviest law's is ruled out: weight 0, and
    /// the intervals do not span it.
    pub span: f64,
    /// The least run-to-run spread the intervals assume (where nothing was repeated, the
    /// spread itself).
    pub repeat_prior: f64,
    /// The least run-to-run spread the evidence assumes: the scale of
    /// [`Weighing::Evidence`], the bar of [`Rule::growth_evidence`] and of [`Rule::refute`].
    /// Apart from [`Rule::repeat_prior`], so that choosing the intervals cannot move the law
    /// the model uses.
    pub noise_floor: f64,
    /// The least margin by which a law must be faster than measured, beyond the law that was
    /// so least, to be refuted ([`Rule::refute`]), whatever the code's spread.
    pub refute_floor: f64,
    /// The error added per doubling beyond the measured counts, before the code's own
    /// extrapolation error.
    pub per_doubling_prior: f64,
    /// The error per doubling where no count could be left out (one count beyond the
    /// fewest): nothing measured it.
    pub unvalidated_per_doubling: f64,
}

impl Default for Rule {
    fn default() -> Rule {
        // Chosen by the design study (docs/NODE_AXIS.md) on the Ice Lake codes and the
        // synthetic regimes together (each regime and each Ice Lake fit set weighed alike), the
        // settings that scored best on all of them; each regime and each Ice Lake code was
        // scored with the settings chosen on the others.
        Rule {
            weighing: Weighing::Evidence(4.0),
            serial_nonneg: false,
            power: true,
            growth_evidence: Some(2.0),
            growth_prior: 1.0,
            refute: None,
            center: Center::Median,
            energy_law: None,
            method_choice: true,
            method_bar: 0.0,
            plain_growth_gate: true,
            energy_choice: false,
            span: 0.05,
            repeat_prior: 0.01,
            noise_floor: 0.01,
            refute_floor: 0.0,
            per_doubling_prior: 0.1,
            unvalidated_per_doubling: 0.05,
        }
    }
}

impl Weighing {
    /// The multiple of the code's spread the weighing judges errors against (0 where none).
    pub fn kappa(self) -> f64 {
        match self {
            Weighing::Evidence(k)
            | Weighing::PseudoBma(k)
            | Weighing::Stack(k)
            | Weighing::StackPooled(k) => k,
            Weighing::Floor(_) | Weighing::Best => 0.0,
        }
    }
}

impl Rule {
    /// The error per doubling beyond the measured counts of a law (time or energy) of these
    /// left-out errors (signed, relative, by count): the last one's over the doublings from
    /// the count before it, at least one.
    pub fn per_doubling(&self, folds: &[(u32, f64)]) -> f64 {
        let own = match folds {
            // A count less than a doubling beyond the one before is taken as a doubling beyond
            // it: its error is mostly what any count shows, and over a fraction of a doubling it
            // would read as many times that error a doubling (soma on its 32 counts: 792%).
            [.., (prev, _), (last, e)] => {
                e.abs() / (f64::from(*last) / f64::from(*prev)).log2().max(1.0)
            }
            [(_, e)] => e.abs(),
            [] => self.unvalidated_per_doubling,
        };
        own.min(crate::limits::MOST_REL_SD)
    }

    /// How the laws are weighed, in words.
    fn weighing_words(&self) -> String {
        match self.weighing {
            Weighing::Floor(f) => format!(
                "laws weighted by 1/(e^2 + {:.1}%^2), e each law's root-mean-square \
                 leave-one-node-count-out error",
                100.0 * f
            ),
            Weighing::Best => "the law of least leave-one-node-count-out error".into(),
            Weighing::Evidence(k) => format!(
                "laws weighted by their leave-one-node-count-out errors against {k} times the \
                 code's run-to-run spread, exp(-sum e^2 / 2 ({k} s)^2)"
            ),
            Weighing::Stack(k) => format!(
                "laws weighted by Bayesian stacking of their leave-one-node-count-out \
                 predictive densities (spread {k} times each law's own left-out error or the \
                 code's run-to-run spread, the larger)"
            ),
            Weighing::StackPooled(k) => format!(
                "laws weighted by Bayesian stacking of their leave-one-node-count-out \
                 predictive densities (spread {k} times the code's run-to-run spread or the \
                 best law's left-out error, the larger)"
            ),
            Weighing::PseudoBma(k) => format!(
                "laws weighted by pseudo-BMA+ of their leave-one-node-count-out errors against \
                 {k} times the code's run-to-run spread (Bayesian bootstrap over the left-out \
                 counts)"
            ),
        }
    }

    /// The choice of method per code ([`Rule::method_choice`]) in words, or nothing.
    fn method_words(&self) -> String {
        if !self.method_choice {
            return String::new();
        }
        let by = if self.method_bar > 0.0 {
            format!(
                " by more than {} times the run-to-run spread (root-mean-square)",
                self.method_bar
            )
        } else {
            String::new()
        };
        let gate = if self.plain_growth_gate && self.growth_evidence.is_some() {
            " (its growing laws under the same bar as the family's)"
        } else {
            ""
        };
        format!(
            "; per code with three or more counts beyond the fewest, the plain reference's \
             single law of least left-out error{gate} instead where, refitted without each of \
             those counts, it predicted them better{by}"
        )
    }

    /// How energy over node counts is judged, in words.
    fn energy_words(&self) -> String {
        match self.energy_law {
            Some((c, w @ (Weighing::Stack(_) | Weighing::StackPooled(_)))) => format!(
                "energy: the derived form and direct laws of n weighted by Bayesian \
                 stacking of their left-out errors (spread {} times {}), the model's {}",
                w.kappa(),
                if matches!(w, Weighing::Stack(_)) {
                    "each one's own"
                } else {
                    "the best one's"
                },
                c.name()
            ),
            Some((c, w)) => format!(
                "energy: the derived form and direct laws of n weighted by their left-out \
                 errors against {} times the code's spread, the model's {}",
                w.kappa(),
                c.name()
            ),
            None if self.energy_choice => "energy derived from time and node power, or per \
                 code with three or more counts beyond the fewest the direct energy law of \
                 least left-out error instead where, refitted without each of those counts, \
                 it predicted them better"
                .into(),
            None => "energy derived from time and node power".into(),
        }
    }

    /// The rule in words, as the profile records it.
    pub fn describe(&self) -> String {
        let w = self.weighing_words();
        let growth = match self.growth_evidence {
            Some(g) => format!(
                "a growing law weighs only where a left-out count is slower than every law \
                 without growth by more than {g} times the run-to-run spread"
            ),
            None => "growing laws weighed as the others".into(),
        };
        let refute = match self.refute {
            Some(r) => format!(
                "; a law that predicted a count (left out, or fitted on every count) faster \
                 than measured by more than {r} times the run-to-run spread{} beyond the law \
                 that did so least ruled out",
                if self.refute_floor > 0.0 {
                    format!(" (and {:.1}%)", 100.0 * self.refute_floor)
                } else {
                    String::new()
                }
            ),
            None => String::new(),
        };
        let noise = if self.noise_floor == self.repeat_prior {
            String::new()
        } else {
            format!(
                "; the evidence's run-to-run spread at least {:.1}%",
                100.0 * self.noise_floor
            )
        };
        let method = self.method_words();
        format!(
            "{w}{}; {growth}{}{refute}{noise}{method}; the model's law {}; {}; laws under {:.0}% of the heaviest's weight ruled out; serial \
             time {}; intervals: from the most to the least favourable law left, run-to-run \
             spread at least {:.1}%, {:.1}% more error per doubling beyond the measured counts \
             ({:.1}% with no count to leave out)",
            if self.power {
                "; work that divides as n^-p (0 < p <= 1) among them"
            } else {
                ""
            },
            if self.growth_prior == 1.0 {
                String::new()
            } else {
                format!(", prior weight {} against 1", self.growth_prior)
            },
            self.center.name(),
            self.energy_words(),
            100.0 * self.span,
            if self.serial_nonneg {
                ">= 0"
            } else {
                "of either sign"
            },
            100.0 * self.repeat_prior,
            100.0 * self.per_doubling_prior,
            100.0 * self.unvalidated_per_doubling
        )
    }

    /// Parses the design study's `KEY=VALUE,...` (each key optional, the others default):
    /// `weigh=best|floor:F|evidence:K|pbma:K|stack:K|stackpool:K`, `floor=F|best` (as `weigh=floor:F`),
    /// `serial=free|nonneg`, `power=on|off`, `growth=free|G`, `prior=P`, `refute=off|R`, `span=S`,
    /// `center=mean|median|relative`, `energy=derived|CENTER:KAPPA|CENTER:stack:KAPPA` (`CENTER` mean, median or
    /// relative; `stack:` weighs the energy laws by stacking), `method=family|choose`
    /// ([`Rule::method_choice`]), `methodbar=B` ([`Rule::method_bar`]),
    /// `plaingrowth=free|gate` ([`Rule::plain_growth_gate`]),
    /// `emethod=derived|choose` ([`Rule::energy_choice`]),
    /// `repeat=R`, `doubling=D`, `unvalidated=U`, `noise=N` (the evidence's floor on the spread),
    /// `bar=B` (the refutation's least margin).
    pub fn parse(s: &str) -> Result<Rule, String> {
        let mut r = Rule::default();
        let mut given = std::collections::BTreeMap::new();
        for kv in s.split(',').filter(|x| !x.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("KEY=VALUE pairs, not `{kv}`"))?;
            // `floor=` is `weigh=floor:`: one setting, given once.
            let setting = if k == "floor" { "weigh" } else { k };
            if let Some(first) = given.insert(setting, kv) {
                return Err(format!(
                    "each key once: `{kv}` sets what `{first}` set (which would win is a guess)"
                ));
            }
            // A share or a spread (a fraction, at most 1: 100%), or a multiple (at most 100).
            let num = |v: &str, most: f64| -> Result<f64, String> {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && (0.0..=most).contains(x))
                    .ok_or_else(|| format!("{k}: a number from 0 to {most}, not `{v}`"))
            };
            let share = |v: &str| num(v, 1.0);
            let times = |v: &str| num(v, 100.0);
            match (k, v.split_once(':')) {
                ("weigh" | "floor", _) if v == "best" => r.weighing = Weighing::Best,
                ("weigh", Some(("floor", f))) => r.weighing = Weighing::Floor(share(f)?),
                ("weigh", Some(("evidence", f))) => r.weighing = Weighing::Evidence(times(f)?),
                ("weigh", Some(("pbma", f))) => r.weighing = Weighing::PseudoBma(times(f)?),
                ("weigh", Some(("stack", f))) => r.weighing = Weighing::Stack(times(f)?),
                ("weigh", Some(("stackpool", f))) => r.weighing = Weighing::StackPooled(times(f)?),
                ("method", None) if v == "family" || v == "choose" => {
                    r.method_choice = v == "choose"
                }
                ("methodbar", None) => r.method_bar = times(v)?,
                ("plaingrowth", None) if v == "gate" || v == "free" => {
                    r.plain_growth_gate = v == "gate"
                }
                ("emethod", None) if v == "derived" || v == "choose" => {
                    r.energy_choice = v == "choose"
                }
                ("floor", None) => r.weighing = Weighing::Floor(share(v)?),
                ("serial", None) if v == "free" || v == "nonneg" => r.serial_nonneg = v == "nonneg",
                ("power", None) if v == "on" || v == "off" => r.power = v == "on",
                ("growth", None) if v == "free" => r.growth_evidence = None,
                ("growth", None) => r.growth_evidence = Some(times(v)?),
                ("prior", None) => r.growth_prior = times(v)?,
                ("refute", None) if v == "off" => r.refute = None,
                ("refute", None) => r.refute = Some(times(v)?),
                ("span", None) => r.span = share(v)?,
                ("center", None) if v == "mean" => r.center = Center::Mean,
                ("center", None) if v == "median" => r.center = Center::Median,
                ("center", None) if v == "relative" => r.center = Center::Relative,
                ("energy", None) if v == "derived" => r.energy_law = None,
                ("energy", Some((c, k))) => r.energy_law = Some(energy_rule(c, k, &times)?),
                ("repeat", None) => r.repeat_prior = share(v)?,
                ("noise", None) => r.noise_floor = share(v)?,
                ("bar", None) => r.refute_floor = share(v)?,
                ("doubling", None) => r.per_doubling_prior = share(v)?,
                ("unvalidated", None) => r.unvalidated_per_doubling = share(v)?,
                _ => return Err(format!("unknown key or value `{kv}`")),
            }
        }
        Ok(r)
    }
}

/// `energy=CENTER:KAPPA` or `CENTER:stack:KAPPA` (`stackpool:` too): the energy law's
/// center and weighing, `times` reading the multiple.
fn energy_rule(
    c: &str,
    k: &str,
    times: &dyn Fn(&str) -> Result<f64, String>,
) -> Result<(Center, Weighing), String> {
    let center = match c {
        "mean" => Center::Mean,
        "median" => Center::Median,
        "relative" => Center::Relative,
        _ => return Err(format!("energy: mean, median or relative, not `{c}`")),
    };
    let w = match k.split_once(':') {
        Some(("stack", k)) => Weighing::Stack(times(k)?),
        Some(("stackpool", k)) => Weighing::StackPooled(times(k)?),
        _ => Weighing::Evidence(times(k)?),
    };
    Ok((center, w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_design_key_given_twice_or_out_of_its_range_is_refused_naming_it() {
        // Given twice, the last one won unsaid; a spread of 1e308 passed and the fit failed
        // at its last check, or printed an interval of `inf%` and wrote it.
        for (s, says) in [
            (
                "refute=2,refute=off",
                "`refute=off` sets what `refute=2` set",
            ),
            (
                "weigh=best,floor=0.03",
                "`floor=0.03` sets what `weigh=best` set",
            ),
            ("span=0.05,span=0.05", "each key once"),
            (
                "doubling=1e308",
                "doubling: a number from 0 to 1, not `1e308`",
            ),
            ("noise=1.5", "noise: a number from 0 to 1"),
            ("weigh=floor:2", "weigh: a number from 0 to 1"),
            ("weigh=evidence:1e308", "weigh: a number from 0 to 100"),
            ("energy=median:stack:101", "energy: a number from 0 to 100"),
            ("growth=1000", "growth: a number from 0 to 100"),
        ] {
            let err = Rule::parse(s).unwrap_err();
            assert!(err.contains(says), "{s}: {err}");
        }
        let r = Rule::parse("span=1,doubling=1,weigh=evidence:100").unwrap();
        assert_eq!((r.span, r.per_doubling_prior), (1.0, 1.0));
        assert_eq!(r.weighing, Weighing::Evidence(100.0));
    }

    #[test]
    fn the_design_keys_parse_and_unknown_ones_are_refused() {
        let r = Rule::parse("weigh=evidence:3,power=off,growth=free,span=0.1,repeat=0.02").unwrap();
        assert_eq!(r.weighing, Weighing::Evidence(3.0));
        assert!(!r.power);
        assert_eq!(r.growth_evidence, None);
        assert_eq!(r.span, 0.1);
        assert_eq!(r.repeat_prior, 0.02);
        assert_eq!(r.noise_floor, Rule::default().noise_floor);
        let d = Rule::parse("noise=0.03,bar=0.05").unwrap();
        assert_eq!((d.noise_floor, d.refute_floor), (0.03, 0.05));
        assert_eq!(Rule::parse("floor=best").unwrap().weighing, Weighing::Best);
        assert_eq!(
            Rule::parse("floor=0.03").unwrap().weighing,
            Weighing::Floor(0.03)
        );
        assert_eq!(Rule::parse("refute=2").unwrap().refute, Some(2.0));
        assert_eq!(Rule::parse("refute=off").unwrap().refute, None);
        assert!(Rule::parse("refute=-2").is_err());
        assert!(Rule::parse("power=maybe").is_err());
        assert!(Rule::parse("span=-1").is_err());
        assert!(Rule::parse("nokey").is_err());
        assert!(Rule::default().describe().contains("n^-p"));
        let s = Rule::parse("weigh=stack:2,energy=median:stack:1,method=choose").unwrap();
        assert_eq!(s.weighing, Weighing::Stack(2.0));
        assert_eq!(s.energy_law, Some((Center::Median, Weighing::Stack(1.0))));
        assert!(s.method_choice && !Rule::parse("method=family").unwrap().method_choice);
        assert_eq!(
            Rule::parse("energy=median:1").unwrap().energy_law,
            Some((Center::Median, Weighing::Evidence(1.0)))
        );
        assert!(Rule::parse("method=maybe").is_err());
        assert_eq!(Rule::parse("methodbar=1").unwrap().method_bar, 1.0);
        assert!(Rule::parse("methodbar=-1").is_err());
        assert!(Rule::parse("emethod=choose").unwrap().energy_choice);
        assert!(!Rule::parse("emethod=derived").unwrap().energy_choice);
        assert!(Rule::parse("emethod=maybe").is_err());
        let g = Rule::parse("plaingrowth=free").unwrap();
        assert!(!g.plain_growth_gate && Rule::default().plain_growth_gate);
        assert_eq!(Rule::default().growth_evidence, Some(2.0));
        assert!(
            Rule::default()
                .describe()
                .contains("under the same bar as the family's")
        );
        assert!(!g.describe().contains("under the same bar as the family's"));
        assert!(Rule::parse("plaingrowth=maybe").is_err());
    }

    #[test]
    fn the_error_per_doubling_counts_a_step_of_less_than_a_doubling_as_one() {
        let rule = Rule::default();
        // soma's last left-out count on its every count: 32 after 31, 57.8% off.
        let dense = rule.per_doubling(&[(31, 0.3), (32, -0.578)]);
        assert!((dense - 0.578).abs() < 1e-12, "{dense}");
        // Two doublings: half the error a doubling.
        let sparse = rule.per_doubling(&[(4, 0.0), (16, 0.2)]);
        assert!((sparse - 0.1).abs() < 1e-12, "{sparse}");
        // Never more than a profile keeps.
        let wild = rule.per_doubling(&[(2, 0.0), (4, 1e4)]);
        assert_eq!(wild, crate::limits::MOST_REL_SD);
        assert_eq!(rule.per_doubling(&[]), rule.unvalidated_per_doubling);
    }
}
