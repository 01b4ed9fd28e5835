//! The AWS flags (`--provider aws`): one flag per setting of
//! karpenter-aws's [`SETTINGS`] table, under upstream's names, each also
//! read from its environment variable (and that variable's older names), a
//! flag winning over the environment.
//!
//! A setting both clouds have (`CLUSTER_NAME`, `CLUSTER_ENDPOINT`,
//! `VM_MEMORY_OVERHEAD_PERCENT`) is one flag, which the cloud `--provider`
//! names reads. As for Azure, parsing never validates:
//! [`AwsArgs::settings`] hands every value to
//! [`AwsSettings::from_lookup`], which lists every problem at once.

use std::collections::BTreeMap;

use clap::{Arg, ArgMatches, Command, FromArgMatches};
#[cfg(feature = "aws")]
use karpenter_aws::settings::{AwsSettings, SETTINGS, SettingsError};

/// The AWS settings (`--provider aws`), as flags; each also from its
/// environment variable. Credentials are never flags: they come from the
/// AWS credential chain (IRSA, EKS Pod Identity, the instance's metadata).
#[derive(Clone, Debug, Default)]
pub struct AwsArgs {
    /// The settings given as flags, by their environment name.
    flags: BTreeMap<&'static str, String>,
}

impl AwsArgs {
    /// The value of a setting given as a flag, by its environment name.
    pub fn flag(&self, variable: &str) -> Option<&str> {
        self.flags.get(variable).map(String::as_str)
    }

    /// The settings from the flags, else the process environment.
    #[cfg(feature = "aws")]
    pub fn settings(&self) -> Result<AwsSettings, SettingsError> {
        self.settings_with(|name| std::env::var(name).ok())
    }

    /// The settings from the flags, else `env` (by a setting's name, then
    /// its aliases): a flag wins over every environment name.
    #[cfg(feature = "aws")]
    pub fn settings_with(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<AwsSettings, SettingsError> {
        AwsSettings::from_lookup(|name| self.flags.get(name).cloned().or_else(|| env(name)))
    }
}

/// The settings' table (variable, flag, help), or none in a binary built
/// without AWS (whose `--provider aws` is refused anyway).
#[cfg(feature = "aws")]
fn settings_table() -> impl Iterator<Item = (&'static str, &'static str, String)> {
    SETTINGS.iter().map(|s| {
        let mut names = vec![s.variable];
        names.extend_from_slice(s.aliases);
        let help = format!("{} [env: {}]", s.help, names.join(", "));
        (s.variable, s.flag, help)
    })
}

#[cfg(not(feature = "aws"))]
fn settings_table() -> impl Iterator<Item = (&'static str, &'static str, String)> {
    std::iter::empty()
}

impl clap::Args for AwsArgs {
    fn augment_args(cmd: Command) -> Command {
        settings_table().fold(cmd, |cmd, (variable, flag, help)| {
            // A setting Azure's flags already hold is the same flag.
            if cmd.get_arguments().any(|a| a.get_id() == variable) {
                return cmd;
            }
            cmd.arg(Arg::new(variable).long(flag).value_name("VALUE").help(help))
        })
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for AwsArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut args = AwsArgs::default();
        args.update_from_arg_matches(matches)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for (variable, _, _) in settings_table() {
            if let Ok(Some(value)) = matches.try_get_one::<String>(variable) {
                self.flags.insert(variable, value.clone());
            }
        }
        Ok(())
    }
}

#[cfg(all(test, feature = "aws"))]
mod tests {
    use clap::Parser;

    use crate::controller::Args;

    fn parse(flags: &[&str]) -> Args {
        let mut all = vec!["karpenter-controller", "--provider", "aws"];
        all.extend_from_slice(flags);
        Args::try_parse_from(all).expect("the flags parse")
    }

    #[test]
    fn every_setting_is_a_flag_under_upstreams_name() {
        let args = parse(&[
            "--cluster-name",
            "demo",
            "--interruption-queue",
            "karpenter-demo",
            "--isolated-vpc",
            "true",
            "--reserved-enis",
            "1",
            "--vm-memory-overhead-percent",
            "0.1",
        ]);
        let settings = args.aws.settings_with(|_| None).expect("valid settings");
        assert_eq!(settings.cluster_name, "demo");
        assert_eq!(
            settings.interruption_queue.as_deref(),
            Some("karpenter-demo")
        );
        assert!(settings.isolated_vpc);
        assert_eq!(settings.reserved_enis, 1);
        assert!((settings.vm_memory_overhead_percent - 0.1).abs() < 1e-12);
    }

    #[test]
    fn a_flag_wins_over_the_environment_and_the_environment_fills_the_rest() {
        let args = parse(&["--cluster-name", "from-flag"]);
        let env = |name: &str| match name {
            "CLUSTER_NAME" => Some("from-env".to_owned()),
            "INTERRUPTION_QUEUE" => Some("queue-from-env".to_owned()),
            _ => None,
        };
        let settings = args.aws.settings_with(env).expect("valid settings");
        assert_eq!(settings.cluster_name, "from-flag");
        assert_eq!(
            settings.interruption_queue.as_deref(),
            Some("queue-from-env")
        );
    }

    #[test]
    fn every_problem_is_listed_at_once() {
        let args = parse(&["--reserved-enis=-1", "--ami-refresh-interval", "5s"]);
        let error = args
            .aws
            .settings_with(|_| None)
            .expect_err("three problems");
        let message = error.to_string();
        for name in ["CLUSTER_NAME", "RESERVED_ENIS", "AMI_REFRESH_INTERVAL"] {
            assert!(message.contains(name), "{message}");
        }
    }
}
