//! `lines!`: defines lines of the catalogue as data. Each enum holds lines of one
//! scope and one level, a variant per line with its parameters as fields; the
//! macro gives it its text (`Display`), its scope and level (the trait
//! [`Line`](super::Line), and the same as inherent constants, which `log::emit!`
//! reads), and adds each variant to the file's templates (the `group`).
//!
//! ```ignore
//! lines! {
//!     group REQUESTS;
//!     /// What the doc comment of the enum says.
//!     pub enum RequestWarning<'a>: Bridge Warning {
//!         /// Why the line is written.
//!         NoResponse { id: &'a dyn Display, method: &'a str, limit: &'a str }
//!             => "request {id} ({method}): no response in {limit}",
//!         TooManyRounds { id: &'a dyn Display, method: &'a str, rounds as "n": u64 }
//!             => "request {id} ({method}): the upstream server asked for input in {rounds} rounds",
//!     }
//! }
//! ```
//!
//! The format string names each field once (the compiler checks it); a field
//! named differently on the page says its page name with `as "..."`.

macro_rules! lines {
    (
        group $group:ident;
        $(
            $(#[$attr:meta])*
            pub enum $name:ident $(<$lt:lifetime>)? : $scope:ident $level:ident {
                $(
                    $(#[$variant_attr:meta])*
                    $variant:ident $({
                        $($field:ident $(as $page:literal)? : $type:ty),* $(,)?
                    })? => $format:literal
                ),* $(,)?
            }
        )*
    ) => {
        $(
            $(#[$attr])*
            pub enum $name $(<$lt>)? {
                $(
                    $(#[$variant_attr])*
                    $variant $({ $($field: $type),* })?
                ),*
            }

            impl $(<$lt>)? ::std::fmt::Display for $name $(<$lt>)? {
                fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                    match self {
                        $(
                            Self::$variant $({ $($field),* })? => {
                                write!(f, $format $($(, $field = $field)*)?)
                            }
                        )*
                    }
                }
            }

            impl $(<$lt>)? $crate::catalogue::Line for $name $(<$lt>)? {
                const SCOPE: $crate::catalogue::Scope = $crate::catalogue::Scope::$scope;
                const LEVEL: $crate::catalogue::Level = $crate::catalogue::Level::$level;
            }

            // The same constants without the trait, so that `log::emit!` can name
            // them by the type's name alone (a path with the trait would have to
            // spell the type's lifetime). Lines that are printed, not logged (the
            // errors of the command line), never use them.
            #[allow(dead_code)]
            impl $(<$lt>)? $name $(<$lt>)? {
                pub const SCOPE: $crate::catalogue::Scope = $crate::catalogue::Scope::$scope;
                pub const LEVEL: $crate::catalogue::Level = $crate::catalogue::Level::$level;

                /// The line itself: `log::emit!` writes only a line of this type.
                #[doc(hidden)]
                pub fn checked(line: &Self) -> &Self {
                    line
                }
            }
        )*

        /// The lines of this file, in their template form.
        pub const $group: &[$crate::catalogue::Template] = &[
            $($(
                $crate::catalogue::Template {
                    kind: stringify!($name),
                    variant: stringify!($variant),
                    scope: $crate::catalogue::Scope::$scope,
                    level: $crate::catalogue::Level::$level,
                    format: $format,
                    names: &[$($((stringify!($field), lines!(@page $($page)?))),*)?],
                },
            )*)*
        ];
    };
    (@page) => {
        None
    };
    (@page $page:literal) => {
        Some($page)
    };
}
