"""Contains all the data models used in inputs/outputs"""

from .action import Action
from .attempt_request import AttemptRequest
from .attempt_response import AttemptResponse
from .attributes import Attributes
from .audience_kind import AudienceKind
from .audience_view import AudienceView
from .audience_view_source import AudienceViewSource
from .auth_failure import AuthFailure
from .auth_reason import AuthReason
from .authority_type_0 import AuthorityType0
from .authority_type_1 import AuthorityType1
from .authority_type_2 import AuthorityType2
from .authorize_decision import AuthorizeDecision
from .authorize_request import AuthorizeRequest
from .authorize_response import AuthorizeResponse
from .basis import Basis
from .blocked_by import BlockedBy
from .bulk_check_request import BulkCheckRequest
from .bulk_check_response import BulkCheckResponse
from .capability_view import CapabilityView
from .chain_link import ChainLink
from .chain_response import ChainResponse
from .check_request import CheckRequest
from .check_response import CheckResponse
from .consistency_type_2 import ConsistencyType2
from .consistency_type_3 import ConsistencyType3
from .constraints import Constraints
from .constraints_view import ConstraintsView
from .container import Container
from .container_resolution import ContainerResolution
from .container_resolution_reason import ContainerResolutionReason
from .context_candidate import ContextCandidate
from .context_item import ContextItem
from .context_request import ContextRequest
from .decision import Decision
from .dependents_response import DependentsResponse
from .derive_request import DeriveRequest
from .disposition import Disposition
from .error import Error
from .error_error import ErrorError
from .error_error_code import ErrorErrorCode
from .error_error_details import ErrorErrorDetails
from .expand_response import ExpandResponse
from .grant_view import GrantView
from .health import Health
from .identity import Identity
from .item_view import ItemView
from .lifecycle_request import LifecycleRequest
from .lookup_request import LookupRequest
from .lookup_response import LookupResponse
from .new_capability import NewCapability
from .new_device import NewDevice
from .new_grant import NewGrant
from .new_identity import NewIdentity
from .new_item import NewItem
from .new_participant import NewParticipant
from .new_relation import NewRelation
from .new_store import NewStore
from .openapi_response_200 import OpenapiResponse200
from .origin_type_0 import OriginType0
from .participant_kind import ParticipantKind
from .partition_output import PartitionOutput
from .quality import Quality
from .ready import Ready
from .ready_degraded import ReadyDegraded
from .ready_status import ReadyStatus
from .reason import Reason
from .replication import Replication
from .request_context import RequestContext
from .schema_input import SchemaInput
from .schema_response import SchemaResponse
from .schema_response_relations_item import SchemaResponseRelationsItem
from .schema_response_relations_item_opens_item import SchemaResponseRelationsItemOpensItem
from .sealed_context import SealedContext
from .state import State
from .store_info import StoreInfo
from .viewers import Viewers
from .watch_event_type_0_change import WatchEventType0Change
from .watch_event_type_1_heartbeat import WatchEventType1Heartbeat
from .write_outcome import WriteOutcome
from .write_outcome_outcome import WriteOutcomeOutcome
from .write_outcome_reason import WriteOutcomeReason

__all__ = (
    "Action",
    "AttemptRequest",
    "AttemptResponse",
    "Attributes",
    "AudienceKind",
    "AudienceView",
    "AudienceViewSource",
    "AuthFailure",
    "AuthorityType0",
    "AuthorityType1",
    "AuthorityType2",
    "AuthorizeDecision",
    "AuthorizeRequest",
    "AuthorizeResponse",
    "AuthReason",
    "Basis",
    "BlockedBy",
    "BulkCheckRequest",
    "BulkCheckResponse",
    "CapabilityView",
    "ChainLink",
    "ChainResponse",
    "CheckRequest",
    "CheckResponse",
    "ConsistencyType2",
    "ConsistencyType3",
    "Constraints",
    "ConstraintsView",
    "Container",
    "ContainerResolution",
    "ContainerResolutionReason",
    "ContextCandidate",
    "ContextItem",
    "ContextRequest",
    "Decision",
    "DependentsResponse",
    "DeriveRequest",
    "Disposition",
    "Error",
    "ErrorError",
    "ErrorErrorCode",
    "ErrorErrorDetails",
    "ExpandResponse",
    "GrantView",
    "Health",
    "Identity",
    "ItemView",
    "LifecycleRequest",
    "LookupRequest",
    "LookupResponse",
    "NewCapability",
    "NewDevice",
    "NewGrant",
    "NewIdentity",
    "NewItem",
    "NewParticipant",
    "NewRelation",
    "NewStore",
    "OpenapiResponse200",
    "OriginType0",
    "ParticipantKind",
    "PartitionOutput",
    "Quality",
    "Ready",
    "ReadyDegraded",
    "ReadyStatus",
    "Reason",
    "Replication",
    "RequestContext",
    "SchemaInput",
    "SchemaResponse",
    "SchemaResponseRelationsItem",
    "SchemaResponseRelationsItemOpensItem",
    "SealedContext",
    "State",
    "StoreInfo",
    "Viewers",
    "WatchEventType0Change",
    "WatchEventType1Heartbeat",
    "WriteOutcome",
    "WriteOutcomeOutcome",
    "WriteOutcomeReason",
)
