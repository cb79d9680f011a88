# LemonLDAP::NG's TOTP second factor, with each code accepted once.
#
# LemonLDAP::NG 2.16 (Debian 12 and 13) accepts a TOTP code as often as it is sent within its
# window (totp2fRange steps either side): a code seen over a shoulder, or phished as it is typed,
# signs in a second time. RFC 6238 section 5.2 and NIST SP 800-63B 5.1.4.2 ask that a code be
# accepted once. This is a second factor module as LemonLDAP::NG's own are written
# (Lemonldap::NG::Portal::Main::SecondFactor): TOTP's, whose verify then claims the user's code
# for the whole time it is valid, in a folder of the provider's own. Loaded through the
# configuration's available2F (deploy/local/sso_config.py), in place of TOTP; the keys users
# registered with TOTP are its keys.
#
# A code reused is refused as a wrong one is (PE_BADOTP: the page's words are the ini's
# error_96), and logged as "totp2f: code already used by USER", which the hub audits
# (gpuportal_spawner.provider_log).
package Lemonldap::NG::Portal::2F::OnceTOTP;

use strict;
use Mouse;
use Digest::SHA qw(sha256_hex);
use Errno qw(EEXIST);
use Fcntl qw(O_CREAT O_EXCL O_WRONLY);
use Lemonldap::NG::Portal::Main::Constants qw(PE_OK PE_ERROR PE_BADOTP);

our $VERSION = '2.0.16';

extends 'Lemonldap::NG::Portal::2F::TOTP';

# The devices are TOTP's (registered by 2F::Register::TOTP), whatever this class is called.
has '+type' => ( default => 'TOTP' );

sub verify {
    my ( $self, $req, $session ) = @_;
    my $result = $self->SUPER::verify( $req, $session );
    return $result unless $result == PE_OK;
    my $user    = $session->{ $self->conf->{whatToTrace} };
    my $claimed = $self->claim( $user, scalar $req->param('code') );
    return PE_ERROR unless defined $claimed;
    return PE_OK if $claimed;
    $self->userLogger->notice("totp2f: code already used by $user");
    return PE_BADOTP;
}

# How long a code stays claimed: as long as any code can be accepted, the steps either side of
# its own and its own.
sub keep_seconds {
    my ($self) = @_;
    my $range = $self->conf->{totp2fRange} // 1;
    return $self->conf->{totp2fInterval} * ( 2 * $range + 1 );
}

# True the first time (user, code) is claimed within keep_seconds; false after; undef when the
# folder cannot be written (the sign-in fails rather than letting a replay through).
sub claim {
    my ( $self, $user, $code ) = @_;
    my $dir = $self->conf->{onceTotpDir};
    unless ( $dir and -d $dir and -w $dir ) {
        $self->logger->error("totp2f: the used codes' folder onceTotpDir is not writable");
        return undef;
    }
    my $keep = $self->keep_seconds;
    $self->forget_older( $dir, $keep );
    # Named by a hash: neither the user nor the code is readable in the folder.
    my $file = "$dir/" . sha256_hex("$user\0$code");
    for my $try ( 1 .. 2 ) {
        # O_EXCL: of two sign-ins racing with the same code, one creates the file.
        if ( sysopen( my $fh, $file, O_CREAT | O_EXCL | O_WRONLY, 0600 ) ) {
            close $fh;
            return 1;
        }
        unless ( $! == EEXIST ) {
            $self->logger->error("totp2f: cannot claim a code in $dir: $!");
            return undef;
        }
        my $mtime = ( stat $file )[9];
        return 0 if defined $mtime and time - $mtime < $keep;
        unlink $file;    # a claim from an earlier window: the same digits may come again
    }
    return 0;
}

sub forget_older {
    my ( $self, $dir, $keep ) = @_;
    opendir( my $dh, $dir ) or return;
    for my $name ( grep { /^[0-9a-f]{64}$/ } readdir $dh ) {
        my $mtime = ( stat "$dir/$name" )[9];
        unlink "$dir/$name" if defined $mtime and time - $mtime >= $keep;
    }
    closedir $dh;
}

1;
