"""The test bed Cinder's key manager: a standalone Cinder's fixed key for
noauth requests, Barbican for requests that came through Keystone.

One Cinder process serves both APIs (noauth on 8776, keystonemiddleware on
8786; see launcher.py) and castellan's key manager is process-wide. With
this backend neither API needs a restart to test its kind of encrypted
volume: a volume created through the noauth API gets Cinder's fixed-key ID
(all zeros), as with ConfKeyManager; one created with a Keystone token gets
a key that Cinder itself orders from the test bed Barbican with the
caller's token, as with `backend = barbican`.

    [key_manager]
    backend = brick_tb_keymgr.KeystoneOrFixedKeyManager
    fixed_key = <hex>

castellan wraps this class in its MigrationKeyManager because fixed_key is
set: get and delete of the all-zero ID use the fixed key there. Cinder's
start-up key migration leaves the fixed-key volumes alone, as it does for
any backend other than barbican.
"""

from castellan.key_manager import barbican_key_manager

FIXED_KEY_ID = '00000000-0000-0000-0000-000000000000'


def _keystone(context):
    # A noauth request's token is "<user>:<project>"; Keystone's fernet
    # tokens are URL-safe base64 and never hold a colon.
    token = getattr(context, 'auth_token', None)
    return bool(token) and ':' not in token


class KeystoneOrFixedKeyManager(barbican_key_manager.BarbicanKeyManager):

    def create_key(self, context, algorithm, length, expiration=None, name=None):
        if not _keystone(context):
            return FIXED_KEY_ID
        return super().create_key(context, algorithm, length, expiration=expiration, name=name)

    def delete(self, context, managed_object_id):
        # A Barbican key of a volume deleted through the noauth API stays in
        # Barbican, whose database a cold start wipes.
        if managed_object_id == FIXED_KEY_ID or not _keystone(context):
            return
        super().delete(context, managed_object_id)
