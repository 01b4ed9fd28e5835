//! The Azure flags (`--provider azure`): one flag per setting of
//! karpenter-azure's [`SETTINGS`] table, each also read from its
//! environment variable (and that variable's older names), a flag winning
//! over the environment. The flags are built from the table rather than
//! written out, so that a setting added there is a flag here at once.
//!
//! clap's own `env` is not used: it takes one name where a setting has
//! aliases, and the environment read by a closure can be replaced in tests
//! ([`AzureArgs::settings_with`]). Parsing never validates: [`AzureArgs::settings`] hands every value to
//! [`AksSettings::from_lookup`], which lists every problem at once.

use std::collections::BTreeMap;
use std::fmt;

use clap::{Arg, ArgMatches, Command, FromArgMatches};
#[cfg(feature = "azure")]
use karpenter_azure::{AksSettings, SETTINGS, SettingsError};

/// The setting whose value is a secret: never echoed, never printed.
const TOKEN_VARIABLE: &str = "KUBELET_BOOTSTRAP_TOKEN";

/// The flags this project took before the settings had upstream's names,
/// kept working: (the setting's variable, the old flag).
const OLD_FLAGS: &[(&str, &str)] = &[
    ("VNET_SUBNET_ID", "azure-subnet-id"),
    ("LOCATION", "azure-location"),
    ("AZURE_NODE_RESOURCE_GROUP", "azure-node-resource-group"),
];

/// The Azure settings (`--provider azure`), as flags; each also from its
/// environment variable. The ARM tokens come from `AZURE_ACCESS_TOKEN`, or
/// else from workload or managed identity, and are never logged, nor is the
/// bootstrap token.
#[derive(Clone, Default)]
pub struct AzureArgs {
    /// The ARM endpoint (`ARM_ENDPOINT`).
    pub arm_endpoint: String,
    /// The settings given as flags, by their environment name.
    flags: BTreeMap<&'static str, String>,
}

/// The ARM endpoint without `--arm-endpoint` or `ARM_ENDPOINT`.
const DEFAULT_ARM_ENDPOINT: &str = "https://management.azure.com";

impl AzureArgs {
    /// The value of a setting given as a flag, by its environment name.
    pub fn flag(&self, variable: &str) -> Option<&str> {
        self.flags.get(variable).map(String::as_str)
    }

    /// The settings from the flags, else the process environment.
    #[cfg(feature = "azure")]
    pub fn settings(&self) -> Result<AksSettings, SettingsError> {
        self.settings_with(|name| std::env::var(name).ok())
    }

    /// The settings from the flags, else `env` (by a setting's name, then
    /// its aliases): a flag wins over every environment name.
    #[cfg(feature = "azure")]
    pub fn settings_with(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<AksSettings, SettingsError> {
        AksSettings::from_lookup(|name| self.lookup(name, &env))
    }

    /// A flag when `name` is a setting's own name and the flag was given;
    /// else the environment. from_lookup asks the setting's own name
    /// before its aliases, so a flag is found before any alias variable.
    #[cfg(feature = "azure")]
    fn lookup(&self, name: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
        self.flags.get(name).cloned().or_else(|| env(name))
    }
}

/// The settings' table, or none in a binary built without Azure (whose
/// `--provider azure` is refused anyway).
#[cfg(feature = "azure")]
fn settings_table() -> impl Iterator<Item = (&'static str, &'static str, String)> {
    SETTINGS.iter().map(|s| {
        let mut names = vec![s.variable];
        names.extend_from_slice(s.aliases);
        let help = format!("{} [env: {}]", s.help, names.join(", "));
        (s.variable, s.flag, help)
    })
}

#[cfg(not(feature = "azure"))]
fn settings_table() -> impl Iterator<Item = (&'static str, &'static str, String)> {
    std::iter::empty()
}

impl clap::Args for AzureArgs {
    fn augment_args(cmd: Command) -> Command {
        let cmd = cmd.arg(
            Arg::new("arm_endpoint")
                .long("arm-endpoint")
                .env("ARM_ENDPOINT")
                .default_value(DEFAULT_ARM_ENDPOINT)
                .value_name("URL")
                .help("The ARM endpoint."),
        );
        settings_table().fold(cmd, |cmd, (variable, flag, help)| {
            let mut arg = Arg::new(variable).long(flag).value_name("VALUE").help(help);
            for (_, old) in OLD_FLAGS.iter().filter(|(v, _)| *v == variable) {
                arg = arg.visible_alias(*old);
            }
            if variable == TOKEN_VARIABLE {
                // The lookup, not clap, reads the environment, so --help
                // shows no value; hidden still, should an `env` be added.
                arg = arg.hide_env_values(true);
            }
            cmd.arg(arg)
        })
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for AzureArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut args = AzureArgs::default();
        args.update_from_arg_matches(matches)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        if let Some(endpoint) = matches.get_one::<String>("arm_endpoint") {
            self.arm_endpoint.clone_from(endpoint);
        }
        for (variable, _, _) in settings_table() {
            if let Some(value) = matches.get_one::<String>(variable) {
                self.flags.insert(variable, value.clone());
            }
        }
        if self.arm_endpoint.is_empty() {
            DEFAULT_ARM_ENDPOINT.clone_into(&mut self.arm_endpoint);
        }
        Ok(())
    }
}

impl fmt::Debug for AzureArgs {
    /// The flags given, the bootstrap token's value as `***`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let flags: BTreeMap<&str, &str> = self
            .flags
            .iter()
            .map(|(name, value)| {
                let shown = if *name == TOKEN_VARIABLE {
                    "***"
                } else {
                    value.as_str()
                };
                (*name, shown)
            })
            .collect();
        f.debug_struct("AzureArgs")
            .field("arm_endpoint", &self.arm_endpoint)
            .field("flags", &flags)
            .finish()
    }
}

#[cfg(all(test, feature = "azure"))]
mod tests;
